import type pg from "pg";
import { type MaintainOptions, type MaintenanceRunResult, maintain } from "./maintenance";
import type { MariadbPoolLike, MysqlPoolLike } from "./mysql";

export interface MaintenanceSchedule {
  /** Runs one maintenance now (waits for a run already in progress in this process first). */
  runNow(): Promise<MaintenanceRunResult>;
  stop(): Promise<void>;
}

/**
 * Runs maintain() at once and then every `intervalMs` (default 5 minutes), one run at a time per
 * process; the advisory lock makes it one at a time across the cluster. The timer is unref'd.
 */
export function startMaintenance(
  pool: pg.Pool | MysqlPoolLike | MariadbPoolLike,
  options: Omit<MaintainOptions, "now" | "afterLock"> & { intervalMs?: number; clock?: () => Date } = {},
): MaintenanceSchedule {
  const intervalMs = options.intervalMs ?? 5 * 60_000;
  let current: Promise<MaintenanceRunResult> | null = null;
  let stopped = false;
  const run = () => {
    current ??= maintain(pool, { ...options, trigger: options.trigger ?? "schedule", now: options.clock?.() }).finally(() => {
      current = null;
    });
    return current;
  };
  void run();
  const timer = setInterval(() => {
    if (!stopped) void run();
  }, intervalMs);
  timer.unref?.();
  return {
    runNow: async () => {
      if (current) await current;
      return run();
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      if (current) await current.catch(() => {});
    },
  };
}
