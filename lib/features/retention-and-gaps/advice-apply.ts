import type pg from "pg";
import type { EffectsSource, MysqlEffectsStore } from "../../console/effects-store";
import { getPrisma, type PrismaClient } from "../../db/prisma";
import { formatDuration } from "../../format";
import {
  connectListening,
  type LiveWorker,
  type MaintenancePlan,
  planMaintenance,
  readLiveWorkers,
} from "../../idempotency/admin";
import { type GetAdviceOptions, getRetentionAdvice } from "./advise-retention";
import type { AdviceApplyBody, AdvicePreview, SettingsUpdateView } from "./contract";
import { RetentionError } from "./errors";
import { getObservedMaxGapSeconds, getRetentionSettings, toPlanView } from "./get-retention";
import { maintenancePool } from "./maintenance-pool";
import { invalidRetention, liveWindowRefusal, type RetentionAudit, settingsValues, updateRetentionSettings } from "./settings";
import { readStoreLiveWorkers } from "./store-settings";

const DAY = 86_400;

interface AdviceApplyDeps {
  /** Where the advisor reads gaps (the effects store). */
  db: EffectsSource;
  /** The maintenance pool: the plan, the live workers, the observed gap. */
  pool?: pg.Pool;
  prisma?: PrismaClient;
  now?: Date;
}

/** The advised retention in whole days (the settings hold days): rounded up, never below a day. */
function advisedDays(recommendedSeconds: number): number {
  return Math.max(1, Math.ceil(recommendedSeconds / DAY));
}

/**
 * The next maintenance run's plan as it would be with other settings: the settings row changed in
 * a transaction that is always rolled back, and the library's own planner (planMaintenance, its
 * public admin API) asked inside it. So the preview is the real plan, not a second copy of its
 * guards. The row lock lasts as long as the plan's reads.
 */
async function planWith(
  pool: pg.Pool,
  values: { retentionDays: number; maxRetryWindowDays: number },
  now: Date,
): Promise<MaintenancePlan> {
  let lost = false;
  const onLost = () => {
    lost = true;
  };
  const client = await connectListening(pool, onLost);
  try {
    await client.query("BEGIN");
    await client.query(
      `INSERT INTO retention_settings (id, retention_days, max_retry_window_days) VALUES (1, $1, $2)
       ON CONFLICT (id) DO UPDATE SET retention_days = EXCLUDED.retention_days, max_retry_window_days = EXCLUDED.max_retry_window_days`,
      [values.retentionDays, values.maxRetryWindowDays],
    );
    return await planMaintenance(client, { now });
  } finally {
    if (!lost) await client.query("ROLLBACK").catch(() => {});
    // The connection goes back to the pool: a listener left on it would outlive this preview, one more each preview.
    client.off("error", onLost);
    client.release(lost ? true : undefined);
  }
}

/** The MySQL effects store the advice reads and changes, unless a PostgreSQL pool was named (tests). */
const mysqlStoreOf = (deps: AdviceApplyDeps): MysqlEffectsStore | null =>
  deps.pool === undefined && "engine" in deps.db && deps.db.engine === "mysql" ? deps.db : null;

/**
 * planWith on a MySQL effects store, the same way: the settings row changed in a transaction that
 * is always rolled back and the library's planner asked on that connection (planMaintenance plans a
 * MySQL connection with the MySQL planner). Workers' plain reads of the row do not wait for it.
 */
async function planWithMysql(
  store: MysqlEffectsStore,
  values: { retentionDays: number; maxRetryWindowDays: number },
  now: Date,
): Promise<MaintenancePlan> {
  const connection = await store.pool.getConnection();
  try {
    await connection.beginTransaction();
    await connection.query(
      `INSERT INTO retention_settings (id, retention_days, max_retry_window_days) VALUES (1, ?, ?)
       ON DUPLICATE KEY UPDATE retention_days = VALUES(retention_days), max_retry_window_days = VALUES(max_retry_window_days)`,
      [values.retentionDays, values.maxRetryWindowDays],
    );
    return await planMaintenance(connection as unknown as Parameters<typeof planMaintenance>[0], {
      now,
      schema: store.database,
    });
  } finally {
    await connection.rollback().catch(() => {});
    connection.release();
  }
}

/** What the preview reads, from the store the workers write: the settings, live workers, largest gap, today's plan and the what-if one. */
interface PreviewSources {
  liveWorkers(): Promise<LiveWorker[]>;
  observedMaxGap(): Promise<number | null>;
  plan(): Promise<MaintenancePlan>;
  planWith(values: { retentionDays: number; maxRetryWindowDays: number }): Promise<MaintenancePlan>;
}

function previewSources(deps: AdviceApplyDeps, now: Date): PreviewSources {
  const store = mysqlStoreOf(deps);
  if (store)
    return {
      liveWorkers: () => readStoreLiveWorkers(store, now),
      observedMaxGap: () => getObservedMaxGapSeconds(store, null),
      plan: () => planMaintenance(store.pool, { now, schema: store.database }),
      planWith: (values) => planWithMysql(store, values, now),
    };
  const pool = deps.pool ?? maintenancePool();
  return {
    liveWorkers: () => readLiveWorkers(pool, now),
    observedMaxGap: () => getObservedMaxGapSeconds(pool, null),
    plan: () => planMaintenance(pool, { now }),
    planWith: (values) => planWith(pool, values, now),
  };
}

/**
 * GET /api/v1/retention/advice/preview: the advice's recommendation as a change of the settings,
 * before and after; what stands in its way (the setting and the value it must reach first); and
 * the plan it implies, partition by partition where it differs from today's. Platform scopes: the
 * settings and partitions are the fleet's. Reads only.
 */
export async function previewAdvice(options: GetAdviceOptions, deps: AdviceApplyDeps): Promise<AdvicePreview> {
  const prisma = deps.prisma ?? getPrisma();
  const now = deps.now ?? new Date();
  const sources = previewSources(deps, now);
  const store = mysqlStoreOf(deps);
  const [advice, settings] = await Promise.all([
    getRetentionAdvice(deps.db, { ...options, now }),
    store ? getRetentionSettings(prisma, store) : getRetentionSettings(prisma),
  ]);
  const summary = {
    status: advice.status,
    recommendedSeconds: advice.recommendedSeconds,
    decidedBy: advice.decidedBy,
    refusals: advice.refusals,
  };
  const none: AdvicePreview = {
    advice: summary,
    change: null,
    blockers: [],
    refusal: null,
    warnings: [],
    plan: null,
    partitionChanges: [],
  };
  if (advice.status !== "recommended" || advice.recommendedSeconds === null) return none;
  const before = { retentionDays: settings.retentionDays, maxRetryWindowDays: settings.maxRetryWindowDays };
  const after = { ...before, retentionDays: advisedDays(advice.recommendedSeconds) };
  if (after.retentionDays === before.retentionDays) return none;

  const values = { ...settingsValues(settings), ...after };
  const refusal = invalidRetention(values, false) ?? liveWindowRefusal(values, await sources.liveWorkers());
  const warnings: string[] = [];
  const gap = await sources.observedMaxGap();
  if (gap !== null && after.retentionDays * DAY < gap)
    warnings.push(
      `retention ${formatDuration(after.retentionDays * DAY)} is below the largest redelivery gap observed (${formatDuration(Math.ceil(gap))})`,
    );
  // One after the other: the what-if plan holds the settings row until it rolls back.
  const current = await sources.plan();
  const advised = await sources.planWith(after);
  const actionNow = new Map(current.partitions.map((p) => [p.name, p.action]));
  const partitionChanges = advised.partitions.flatMap((p) => {
    const was = actionNow.get(p.name) ?? "keep";
    return was === p.action
      ? []
      : [
          {
            name: p.name,
            from: p.from?.toISOString() ?? null,
            to: p.to?.toISOString() ?? null,
            estimatedRows: p.estimatedRows,
            now: was,
            after: p.action,
            reason: p.reason,
          },
        ];
  });
  return {
    advice: summary,
    change: { before, after },
    blockers: refusal?.blockers ?? [],
    refusal: refusal ? { code: refusal.code as "RETENTION_INVALID" | "RETENTION_REFUSED", message: refusal.message } : null,
    warnings,
    plan: toPlanView(advised),
    partitionChanges,
  };
}

interface AdviceApplyAuthor {
  actor: string;
  audit: RetentionAudit;
}

/**
 * POST /api/v1/retention/advice/apply: the previewed change, confirmed. The advice is asked again
 * with the same query: if it now recommends another retention, or the settings are no longer the
 * ones the preview was made against (checked by the settings UPDATE itself), 409 RETENTION_STALE
 * and nothing changes. Then the settings change as PUT /retention/settings changes them (the same
 * refusals, force with a reason), audited as retention.advice.apply with what the advice said.
 * The partitions follow at the next maintenance run (or the Retention page's Apply plan).
 */
export async function applyAdvice(
  body: AdviceApplyBody,
  options: GetAdviceOptions,
  deps: AdviceApplyDeps & AdviceApplyAuthor,
): Promise<SettingsUpdateView> {
  const now = deps.now ?? new Date();
  const advice = await getRetentionAdvice(deps.db, { ...options, now });
  if (advice.status !== "recommended" || advice.recommendedSeconds === null)
    throw new RetentionError(
      "RETENTION_STALE",
      `the advisor no longer recommends a retention (${advice.refusals.map((r) => r.message).join("; ") || "no recommendation"}): nothing was changed`,
    );
  const days = advisedDays(advice.recommendedSeconds);
  if (days !== body.retentionDays)
    throw new RetentionError(
      "RETENTION_STALE",
      `the advice changed since the preview: it now recommends ${days} d, not ${body.retentionDays} d; review it again`,
    );
  return updateRetentionSettings(
    { retentionDays: body.retentionDays, expect: body.expect, force: body.force, reason: body.reason },
    {
      prisma: deps.prisma,
      pool: deps.pool,
      // On a MySQL store: the settings change's audited requested → change → outcome path.
      store: mysqlStoreOf(deps) ?? undefined,
      now,
      actor: deps.actor,
      audit: deps.audit,
      auditAction: "retention.advice.apply",
      auditDetail: {
        advice: {
          recommendedSeconds: advice.recommendedSeconds,
          decidedBy: advice.decidedBy,
          basis: advice.inputs.basis,
          safetyFactor: advice.inputs.safetyFactor,
          windowFrom: advice.inputs.from,
          windowTo: advice.inputs.to,
        },
      },
    },
  );
}
