import type pg from "pg";
import type { Registry } from "prom-client";
import type { Config } from "../config";
import type { ReconcileWindow } from "./adapter";
import { adapterFor } from "./adapters";
import { reconcileMetrics } from "./metrics";
import { type ReconcileProvider, reconcileProviders } from "./providers";
import { ReconcileBusyError, reconcile } from "./reconcile";

const MINUTE = 60_000;
const DAY = 86_400_000;
/** The rolling window: the last hour, aligned to 5 minutes so reruns cover the same windows. */
const ROLLING_WINDOW_MS = 60 * MINUTE;
const ALIGN_MS = 5 * MINUTE;
/** Whole days looked back for one not yet covered. */
const CATCH_UP_DAYS = 3;

/**
 * The windows due at `now` for one provider: the rolling recent hour, and each whole UTC day of the
 * last CATCH_UP_DAYS past its grace period that no completed run covered yet.
 */
export async function dueWindows(pool: pg.Pool, provider: string, graceSeconds: number, now: Date): Promise<ReconcileWindow[]> {
  const end = Math.floor(now.getTime() / ALIGN_MS) * ALIGN_MS;
  const windows: ReconcileWindow[] = [{ from: new Date(end - ROLLING_WINDOW_MS), to: new Date(end) }];
  const today = Math.floor(now.getTime() / DAY) * DAY;
  const days: ReconcileWindow[] = [];
  for (let d = CATCH_UP_DAYS; d >= 1; d--) {
    const day = { from: new Date(today - d * DAY), to: new Date(today - (d - 1) * DAY) };
    if (day.to.getTime() + graceSeconds * 1000 <= now.getTime()) days.push(day);
  }
  if (days.length > 0) {
    const { rows } = await pool.query<{ window_from: Date }>(
      `SELECT window_from FROM reconciliation_coverage WHERE provider = $1 AND window_from = ANY($2::timestamptz[])
          AND window_to - window_from = interval '1 day'`,
      [provider, days.map((day) => day.from)],
    );
    const covered = new Set(rows.map((row) => row.window_from.getTime()));
    windows.push(...days.filter((day) => !covered.has(day.from.getTime())));
  }
  return windows;
}

interface ReconcileSchedule {
  /** One pass now (every configured provider, every due window); resolves when it is done. */
  runOnce(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Reconciliation in the console's maintenance loop: every RECONCILE_INTERVAL_SECONDS, each
 * configured provider's due windows. A window another process is reconciling is skipped (the
 * run's lock); a failed run is recorded and counted, and the loop goes on.
 */
export function startReconcileSchedule(options: {
  pool: pg.Pool;
  config: Config;
  registry: Registry;
  log?: (line: string) => void;
  now?: () => Date;
}): ReconcileSchedule {
  const { pool, config } = options;
  const log = options.log ?? (() => {});
  const configured = reconcileProviders(config).filter((p) => p.configured);
  // A read-only console writes no runs and no findings: it reconciles nothing, and says so once.
  const providers = config.CONSOLE_READ_ONLY ? [] : configured;
  if (config.CONSOLE_READ_ONLY && configured.length > 0)
    log(
      `reconciliation not scheduled: CONSOLE_READ_ONLY=true (a run writes runs and findings); ${configured.map((p) => p.name).join(", ")} reconcile on a console without it, or with npm run reconcile`,
    );
  const metrics = reconcileMetrics(
    options.registry,
    pool,
    providers.map((p) => p.name),
  );
  let running: Promise<void> | null = null;
  let stopped = false;

  async function pass(provider: ReconcileProvider) {
    let adapter: ReturnType<typeof adapterFor>;
    let due: ReconcileWindow[];
    // Outside a run's own try, a database that stopped answering here was an unhandled rejection
    // of the interval's runOnce (issue 35, finding 8): counted and logged like a failed run instead.
    try {
      adapter = adapterFor(provider, config);
      due = await dueWindows(pool, provider.name, config.RECONCILE_GRACE_SECONDS, options.now?.() ?? new Date());
    } catch (error) {
      metrics.runs.inc({ provider: provider.name, status: "failed" });
      log(`reconciliation of ${provider.name} not started: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    for (const window of due) {
      if (stopped) return;
      try {
        const result = await reconcile({
          pool,
          adapter,
          provider,
          window,
          graceSeconds: config.RECONCILE_GRACE_SECONDS,
          trigger: "schedule",
        });
        metrics.runs.inc({ provider: provider.name, status: result.status });
        if (result.status === "failed") log(`reconciliation of ${provider.name} failed: ${result.error}`);
      } catch (error) {
        const busy = error instanceof ReconcileBusyError;
        metrics.runs.inc({ provider: provider.name, status: busy ? "busy" : "failed" });
        if (!busy) log(`reconciliation of ${provider.name} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  const runOnce = () => {
    running ??= (async () => {
      for (const provider of providers) await pass(provider);
    })().finally(() => {
      running = null;
    });
    return running;
  };
  const timer =
    config.RECONCILE_INTERVAL_SECONDS > 0 && providers.length > 0
      ? setInterval(() => void runOnce(), config.RECONCILE_INTERVAL_SECONDS * 1000)
      : null;
  timer?.unref();
  return {
    runOnce,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
