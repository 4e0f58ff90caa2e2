import type pg from "pg";
import { isEffectsDistributed } from "./citus";
import { planMaintenanceMysql } from "./maintenance-mysql";
import {
  fmtSeconds,
  type MaintenancePlan,
  missingRanges,
  NEWEST_KEPT,
  type PartitionRow,
  type PartitionState,
  type PlannedIndex,
  runwayHours,
} from "./maintenance-ranges";
import { readLiveWorkers, readRetentionSettings } from "./maintenance-settings";
import {
  CITUS_PARTITION_BYTES,
  countLiveClaimsSql,
  LIST_DETACHED_ORPHANS,
  LIST_PARTITIONS,
  LIST_TENANT_INDEXES,
  TENANT_INDEX_SUFFIX,
} from "./maintenance-sql";
import { isMysql, type MysqlHandle } from "./mysql";
import { queryingIn, schemaNameOf } from "./schema";

export type {
  Guard,
  MaintenancePlan,
  PartitionRow,
  PartitionState,
  PlannedCreate,
  PlannedIndex,
} from "./maintenance-ranges";

/**
 * What a maintenance run would do at a given time, and why: partitions to premake, to detach and
 * drop (with the guard that keeps each one that stays), Keys indexes to build. Reads only.
 */

type Queryable = Pick<pg.Pool | pg.PoolClient, "query">;

export async function listPartitions(db: Queryable): Promise<PartitionRow[]> {
  return (await db.query<PartitionRow>(LIST_PARTITIONS)).rows;
}

/**
 * listPartitions with each partition's size on disk as Citus counts it (its shards on the workers)
 * when effects is distributed. The row estimates stay the coordinator's (0 there: its partitions
 * hold no rows), which only the retention page shows.
 */
async function listPartitionsSized(db: Queryable, schema: string): Promise<PartitionRow[]> {
  const rows = await listPartitions(db);
  if (!(await isEffectsDistributed(db, schema))) return rows;
  const sized = new Map(
    (await db.query<{ name: string; bytes: number }>(CITUS_PARTITION_BYTES)).rows.map((r) => [r.name, r.bytes]),
  );
  return rows.map((r) => ({ ...r, bytes: sized.get(r.name) ?? r.bytes }));
}

interface TenantIndexRow {
  partition: string;
  index_name: string;
  valid: boolean;
}

/** The Keys indexes of each partition (any name), valid and INVALID apart. */
export async function tenantIndexes(db: Queryable): Promise<Map<string, { valid: string[]; invalid: string[] }>> {
  const byPartition = new Map<string, { valid: string[]; invalid: string[] }>();
  for (const r of (await db.query<TenantIndexRow>(LIST_TENANT_INDEXES)).rows) {
    const entry = byPartition.get(r.partition) ?? { valid: [], invalid: [] };
    (r.valid ? entry.valid : entry.invalid).push(r.index_name);
    byPartition.set(r.partition, entry);
  }
  return byPartition;
}

const tenantIndexName = (partition: string) => `${partition}${TENANT_INDEX_SUFFIX}`;

/** Kept partitions whose upper bound is at or before now and that have no valid Keys index. */
function indexesToBuild(
  now: Date,
  partitions: PartitionState[],
  existing: Map<string, { valid: string[]; invalid: string[] }>,
): PlannedIndex[] {
  const out: PlannedIndex[] = [];
  for (const p of partitions) {
    // A partition about to be dropped needs no index; one that holds now or the future still takes claims.
    if (p.action !== "keep" || !p.to || p.to.getTime() > now.getTime()) continue;
    const found = existing.get(p.name);
    if (found && found.valid.length > 0) continue;
    const invalid = found?.invalid ?? [];
    out.push({
      partition: p.name,
      index: tenantIndexName(p.name),
      invalid,
      reason:
        invalid.length > 0
          ? `an interrupted build left ${invalid.join(", ")} INVALID: drop it and build the Keys index again`
          : `closed since ${p.to.toISOString()} (no claim inserts there): build the Keys index for the console's per-tenant reads`,
    });
  }
  return out;
}

/** What a run would do at `now`, and why. Reads only (catalog, settings, live workers, in-flight counts). */
export async function planMaintenance(
  queryable: Queryable | MysqlHandle,
  options: { now?: Date; schema?: string } = {},
): Promise<MaintenancePlan> {
  // A MySQL pool, or one connection (a what-if plan inside a transaction that is rolled back).
  if (isMysql(queryable)) return planMaintenanceMysql(queryable, options);
  const now = options.now ?? new Date();
  const db = queryingIn(queryable, schemaNameOf(options.schema));
  // One after another: `db` may be a single client.
  const settings = await readRetentionSettings(db);
  const liveWorkers = await readLiveWorkers(db, now);
  const rows = await listPartitionsSized(db, schemaNameOf(options.schema));
  const orphans = (await db.query<{ name: string }>(LIST_DETACHED_ORPHANS)).rows.map((o) => o.name);
  const existingIndexes = await tenantIndexes(db);
  const largestWindow = Math.max(settings.maxRetryWindowSeconds, ...liveWorkers.map((w) => w.maxRetryWindowSeconds), 0);
  const keepSeconds = Math.max(settings.retentionSeconds, largestWindow);
  const dropBefore = new Date(now.getTime() - keepSeconds * 1000);
  const newest = new Set(
    rows
      .filter((r) => r.range_to && !r.detach_pending)
      .sort((a, b) => (b.range_to as Date).getTime() - (a.range_to as Date).getTime())
      .slice(0, NEWEST_KEPT)
      .map((r) => r.name),
  );

  const partitions: PartitionState[] = [];
  for (const r of rows) {
    const base = {
      name: r.name,
      from: r.range_from,
      to: r.range_to,
      detachPending: r.detach_pending,
      estimatedRows: r.estimated_rows,
      bytes: r.bytes,
      liveClaims: null as number | null,
    };
    if (r.detach_pending) {
      partitions.push({ ...base, action: "finalize", guard: null, reason: "an interrupted DETACH … CONCURRENTLY: finish it" });
      continue;
    }
    const to = r.range_to;
    if (!to || to.getTime() > now.getTime()) {
      partitions.push({ ...base, action: "keep", guard: "current", reason: "holds now or the future" });
      continue;
    }
    if (to.getTime() > dropBefore.getTime()) {
      const byWindow = largestWindow > settings.retentionSeconds;
      partitions.push({
        ...base,
        action: "keep",
        guard: byWindow ? "retry-window" : "retention",
        reason: byWindow
          ? `newer than now − ${fmtSeconds(largestWindow)} (the largest declared retry window)`
          : `newer than now − ${fmtSeconds(settings.retentionSeconds)} (the retention)`,
      });
      continue;
    }
    if (newest.has(r.name)) {
      partitions.push({ ...base, action: "keep", guard: "newest", reason: `one of the ${NEWEST_KEPT} newest partitions` });
      continue;
    }
    const live = (await db.query<{ n: number }>(countLiveClaimsSql(r.name), [now])).rows[0]?.n ?? 0;
    base.liveClaims = live;
    if (live > 0) {
      partitions.push({ ...base, action: "keep", guard: "in-flight", reason: `${live} in-progress claim(s) with a live lease` });
      continue;
    }
    partitions.push({ ...base, action: "drop", guard: null, reason: `expired: ends before now − ${fmtSeconds(keepSeconds)}` });
  }

  return {
    now,
    settings,
    liveWorkers,
    keepSeconds,
    dropBefore,
    create: missingRanges(now, settings, rows),
    partitions,
    orphans,
    index: indexesToBuild(now, partitions, existingIndexes),
    runwayHours: runwayHours(now, rows),
  };
}
