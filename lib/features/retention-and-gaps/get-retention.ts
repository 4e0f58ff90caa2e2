import type pg from "pg";
import type { Scope } from "../../auth/scope";
import {
  byEngine,
  type EffectsSource,
  type EffectsStore,
  effectsStore,
  mysqlEffectsStore,
  postgresEffectsStore,
} from "../../console/effects-store";
import { mysqlJson } from "../../console/mysql-sql";
import type { PrismaClient } from "../../db/prisma";
import { getPrisma } from "../../db/prisma";
import { type MaintenancePlan, planMaintenance } from "../../idempotency/admin";
import { DAY_SECONDS, DEFAULT_RETENTION_SETTINGS } from "../../idempotency/states";
import type { MaintenanceRunView, PlanView, RetentionSettingsView, RetentionView } from "./contract";
import { type MaintenanceTarget, maintenanceTarget } from "./maintenance-pool";

/** The Retention page's question: what is kept, why, what would the next run do, what did runs do? */
interface RetentionDeps {
  /** The PostgreSQL maintenance pool (tests); unset: the configured effects store's (maintenanceTarget). */
  pool?: pg.Pool;
  /** The effects store's maintenance pool, either engine; wins over `pool`. */
  target?: MaintenanceTarget;
  prisma?: PrismaClient;
  now?: Date;
  /** Maintenance runs to list, newest first (default 20). */
  runs?: number;
}

export function toPlanView(plan: MaintenancePlan): PlanView {
  return {
    now: plan.now.toISOString(),
    keepSeconds: plan.keepSeconds,
    dropBefore: plan.dropBefore.toISOString(),
    runwayHours: Math.round(plan.runwayHours * 10) / 10,
    create: plan.create.map((c) => ({ name: c.name, from: c.from.toISOString(), to: c.to.toISOString(), reason: c.reason })),
    partitions: plan.partitions.map((p) => ({
      name: p.name,
      from: p.from?.toISOString() ?? null,
      to: p.to?.toISOString() ?? null,
      estimatedRows: p.estimatedRows,
      bytes: p.bytes,
      liveClaims: p.liveClaims,
      detachPending: p.detachPending,
      action: p.action,
      guard: p.guard,
      reason: p.reason,
    })),
    orphans: plan.orphans,
    index: plan.index.map((i) => ({ partition: i.partition, index: i.index, invalid: i.invalid, reason: i.reason })),
  };
}

/**
 * GET /api/v1/retention/plan: exactly what a run would do now, and which guard keeps what. Platform
 * scopes only: each partition's row count and size sum every tenant's effects.
 */
const targetOf = (deps: RetentionDeps): MaintenanceTarget =>
  deps.target ?? (deps.pool ? { engine: "postgres", pool: deps.pool } : maintenanceTarget());

/** The maintenance target's tables as an effects store (the reads below, on the maintenance pool). */
const storeOf = (target: MaintenanceTarget): EffectsStore =>
  target.engine === "mysql" ? mysqlEffectsStore(target.pool, target.database) : postgresEffectsStore(target.pool);

/** The library's plan, on the engine of the store its workers write (on MySQL: the timeline's partitions, expired effects deleted in batches). */
function planOn(target: MaintenanceTarget, now: Date | undefined): Promise<MaintenancePlan> {
  if (target.engine === "mysql") return planMaintenance(target.pool, { now, schema: target.database });
  return planMaintenance(target.pool, { now });
}

export async function getRetentionPlan(scope: Scope, deps: RetentionDeps = {}): Promise<PlanView> {
  scope.requirePlatform("the retention plan (row counts and sizes per partition)");
  return toPlanView(await planOn(targetOf(deps), deps.now));
}

// On MySQL the settings and the runs are the library's tables there (its workers read the
// retention from them); Prisma maps the PostgreSQL ones. The MySQL baseline makes the settings row
// with a placeholder updated_at, '2000-01-01', where PostgreSQL's DEFAULT now() records when the
// baseline made it; an applied migration is never edited, so the read says what PostgreSQL says: a
// row nobody has changed was made when the baseline was applied (migrations.applied_at, UTC).
const SETTINGS_VIEW_MYSQL = `
SELECT s.retention_days, s.max_retry_window_days, s.partition_interval, s.premake_count, s.updated_by,
       CASE WHEN s.updated_by IS NULL AND s.updated_at = '2000-01-01 00:00:00'
            THEN COALESCE((SELECT m.applied_at FROM migrations m WHERE m.version = 1), s.updated_at)
            ELSE s.updated_at END AS updated_at
  FROM retention_settings s WHERE s.id = 1`;
const RUNS_MYSQL = `
SELECT id, runner, \`trigger\`, started_at, finished_at, result, operations, error
  FROM maintenance_runs ORDER BY id DESC LIMIT ?`;

interface SettingsFields {
  retentionDays: number;
  maxRetryWindowDays: number;
  partitionInterval: string;
  premakeCount: number;
  updatedAt: Date;
  updatedBy: string | null;
}

/** The settings the workers read: from the effects store (PostgreSQL through Prisma, MySQL through SQL). */
export async function getRetentionSettings(
  prisma: PrismaClient = getPrisma(),
  store: EffectsSource = effectsStore(),
): Promise<RetentionSettingsView> {
  const row = await byEngine<Promise<SettingsFields | null>>(store, {
    postgres: async () => prisma.retentionSettings.findUnique({ where: { id: 1 } }),
    mysql: async (my) => {
      const [r] = await my.query<{
        retention_days: number;
        max_retry_window_days: number;
        partition_interval: string;
        premake_count: number;
        updated_at: Date;
        updated_by: string | null;
      }>(SETTINGS_VIEW_MYSQL);
      return r
        ? {
            retentionDays: r.retention_days,
            maxRetryWindowDays: r.max_retry_window_days,
            partitionInterval: r.partition_interval,
            premakeCount: r.premake_count,
            updatedAt: r.updated_at,
            updatedBy: r.updated_by,
          }
        : null;
    },
  });
  return {
    retentionDays: row?.retentionDays ?? DEFAULT_RETENTION_SETTINGS.retentionSeconds / DAY_SECONDS,
    maxRetryWindowDays: row?.maxRetryWindowDays ?? DEFAULT_RETENTION_SETTINGS.maxRetryWindowSeconds / DAY_SECONDS,
    partitionInterval: (row?.partitionInterval ??
      DEFAULT_RETENTION_SETTINGS.interval) as RetentionSettingsView["partitionInterval"],
    premakeCount: row?.premakeCount ?? DEFAULT_RETENTION_SETTINGS.premakeCount,
    updatedAt: row?.updatedAt.toISOString() ?? null,
    updatedBy: row?.updatedBy ?? null,
  };
}

interface RunFields {
  id: bigint | number;
  runner: string;
  trigger: string;
  startedAt: Date;
  finishedAt: Date | null;
  result: string;
  operations: unknown;
  error: string | null;
}

async function getMaintenanceRuns(prisma: PrismaClient, store: EffectsStore, take = 20): Promise<MaintenanceRunView[]> {
  const runs = await byEngine<Promise<RunFields[]>>(store, {
    postgres: async () => prisma.maintenanceRun.findMany({ orderBy: { id: "desc" }, take }),
    mysql: async (my) =>
      (
        await my.query<{
          id: number;
          runner: string;
          trigger: string;
          started_at: Date;
          finished_at: Date | null;
          result: string;
          operations: string;
          error: string | null;
        }>(RUNS_MYSQL, [take])
      ).map((r) => ({
        id: r.id,
        runner: r.runner,
        trigger: r.trigger,
        startedAt: r.started_at,
        finishedAt: r.finished_at,
        result: r.result,
        operations: mysqlJson(r.operations),
        error: r.error,
      })),
  });
  return runs.map((r) => ({
    id: r.id.toString(),
    runner: r.runner,
    trigger: r.trigger,
    startedAt: r.startedAt.toISOString(),
    finishedAt: r.finishedAt?.toISOString() ?? null,
    result: r.result,
    operations: (Array.isArray(r.operations) ? r.operations : []) as MaintenanceRunView["operations"],
    error: r.error,
  }));
}

// The largest redelivery gap an effect of one tenant (null: any tenant) has seen: the floor the
// retention should not go below (the gaps advisor, advise-retention.ts, refines this into a recommendation). The
// settings update asks it for the whole fleet, whose retention it changes.
const OBSERVED_MAX_GAP_SQL =
  "SELECT max(max_gap_seconds)::float8 AS gap FROM effects WHERE $1::text IS NULL OR tenant_id = $1::text";
const OBSERVED_MAX_GAP_MYSQL = "SELECT MAX(max_gap_seconds) AS gap FROM effects WHERE ? IS NULL OR tenant_id = ?";

export async function getObservedMaxGapSeconds(source: EffectsSource, tenant: string | null): Promise<number | null> {
  const [row] = await byEngine(source, {
    postgres: async (db) => (await db.query<{ gap: number | null }>(OBSERVED_MAX_GAP_SQL, [tenant])).rows,
    mysql: (db) => db.query<{ gap: number | null }>(OBSERVED_MAX_GAP_MYSQL, [tenant, tenant]),
  });
  return row?.gap ?? null;
}

/**
 * The Retention page. A tenant scope gets the settings (how long its keys are kept) and its own
 * largest gap; the partitions (row counts and sizes of every tenant's effects), the plan, the live
 * workers and the maintenance runs are the platform's, and stay out of its answer (plan null).
 */
export async function getRetention(scope: Scope, deps: RetentionDeps = {}): Promise<RetentionView> {
  const target = targetOf(deps);
  const store = storeOf(target);
  const prisma = deps.prisma ?? getPrisma();
  if (!scope.platform) {
    const [settings, observedMaxGapSeconds] = await Promise.all([
      getRetentionSettings(prisma, store),
      getObservedMaxGapSeconds(store, scope.tenant),
    ]);
    return { settings, plan: null, liveWorkers: [], observedMaxGapSeconds, runs: [] };
  }
  const plan = await planOn(target, deps.now);
  const [settings, runs, observedMaxGapSeconds] = await Promise.all([
    getRetentionSettings(prisma, store),
    getMaintenanceRuns(prisma, store, deps.runs),
    getObservedMaxGapSeconds(store, scope.tenant),
  ]);
  return {
    settings,
    plan: toPlanView(plan),
    liveWorkers: plan.liveWorkers.map((w) => ({
      workerId: w.workerId,
      maxRetryWindowSeconds: w.maxRetryWindowSeconds,
      host: w.host,
      pid: w.pid,
      heartbeatAt: w.heartbeatAt.toISOString(),
    })),
    observedMaxGapSeconds,
    runs,
  };
}
