import type pg from "pg";
import type { Scope } from "../../auth/scope";
import type { PrismaClient } from "../../db/prisma";
import { getPrisma } from "../../db/prisma";
import { type MaintenancePlan, planMaintenance } from "../../idempotency/admin";
import { DAY_SECONDS, DEFAULT_RETENTION_SETTINGS } from "../../idempotency/states";
import type { MaintenanceRunView, PlanView, RetentionSettingsView, RetentionView } from "./contract";
import { maintenancePool } from "./maintenance-pool";

/** The Retention page's question: what is kept, why, what would the next run do, what did runs do? */
interface RetentionDeps {
  pool?: pg.Pool;
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
export async function getRetentionPlan(scope: Scope, deps: RetentionDeps = {}): Promise<PlanView> {
  scope.requirePlatform("the retention plan (row counts and sizes per partition)");
  return toPlanView(await planMaintenance(deps.pool ?? maintenancePool(), { now: deps.now }));
}

export async function getRetentionSettings(prisma: PrismaClient = getPrisma()): Promise<RetentionSettingsView> {
  const row = await prisma.retentionSettings.findUnique({ where: { id: 1 } });
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

async function getMaintenanceRuns(prisma: PrismaClient = getPrisma(), take = 20): Promise<MaintenanceRunView[]> {
  const runs = await prisma.maintenanceRun.findMany({ orderBy: { id: "desc" }, take });
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

export async function getObservedMaxGapSeconds(pool: Pick<pg.Pool, "query">, tenant: string | null): Promise<number | null> {
  const { rows } = await pool.query<{ gap: number | null }>(OBSERVED_MAX_GAP_SQL, [tenant]);
  return rows[0]?.gap ?? null;
}

/**
 * The Retention page. A tenant scope gets the settings (how long its keys are kept) and its own
 * largest gap; the partitions (row counts and sizes of every tenant's effects), the plan, the live
 * workers and the maintenance runs are the platform's, and stay out of its answer (plan null).
 */
export async function getRetention(scope: Scope, deps: RetentionDeps = {}): Promise<RetentionView> {
  const pool = deps.pool ?? maintenancePool();
  const prisma = deps.prisma ?? getPrisma();
  if (!scope.platform) {
    const [settings, observedMaxGapSeconds] = await Promise.all([
      getRetentionSettings(prisma),
      getObservedMaxGapSeconds(pool, scope.tenant),
    ]);
    return { settings, plan: null, liveWorkers: [], observedMaxGapSeconds, runs: [] };
  }
  const plan = await planMaintenance(pool, { now: deps.now });
  const [settings, runs, observedMaxGapSeconds] = await Promise.all([
    getRetentionSettings(prisma),
    getMaintenanceRuns(prisma, deps.runs),
    getObservedMaxGapSeconds(pool, scope.tenant),
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
