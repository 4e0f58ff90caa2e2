import type pg from "pg";
import { isEffectsDistributed } from "./citus";
import { HOUR, type LiveWorker, readLiveWorkers, readRetentionSettings } from "./maintenance-settings";
import {
  CITUS_PARTITION_BYTES,
  countLiveClaimsSql,
  LIST_DETACHED_ORPHANS,
  LIST_PARTITIONS,
  LIST_TENANT_INDEXES,
  TENANT_INDEX_SUFFIX,
} from "./maintenance-sql";
import { queryingIn, schemaNameOf } from "./schema";
import { type PartitionInterval, partitionIntervalSeconds, type RetentionSettingsRow } from "./states";

/**
 * What a maintenance run would do at a given time, and why: partitions to premake, to detach and
 * drop (with the guard that keeps each one that stays), Keys indexes to build. Reads only.
 */

/** The newest partitions (by upper bound) that are never dropped, whatever the settings say. */
const NEWEST_KEPT = 2;

export type Guard = "retention" | "retry-window" | "in-flight" | "newest" | "current";

export interface PartitionState {
  name: string;
  from: Date | null;
  to: Date | null;
  detachPending: boolean;
  estimatedRows: number;
  bytes: number;
  /** In-progress claims with a live lease (counted only for partitions old enough to expire). */
  liveClaims: number | null;
  /** Set on every partition: what the manager will do and, when kept, which guard holds it. */
  action: "keep" | "drop" | "finalize";
  guard: Guard | null;
  reason: string;
}

export interface PlannedCreate {
  name: string;
  from: Date;
  to: Date;
  reason: "ahead" | "missing";
}

/**
 * The Keys index (maintenance-sql.ts, TENANT_INDEX_SHAPE) to build on a closed partition: one whose
 * upper bound has passed (no claim inserts there any more) and that is kept.
 */
export interface PlannedIndex {
  partition: string;
  /** The index to build: `<partition>_tenant_created_at_idx`. */
  index: string;
  /** INVALID leftovers of an interrupted build, dropped CONCURRENTLY before the build. */
  invalid: string[];
  reason: string;
}

export interface MaintenancePlan {
  now: Date;
  settings: RetentionSettingsRow;
  liveWorkers: LiveWorker[];
  /** max(retention, largest declared retry window): nothing newer than now − this is dropped. */
  keepSeconds: number;
  /** now − keepSeconds. */
  dropBefore: Date;
  create: PlannedCreate[];
  partitions: PartitionState[];
  /** Tables we detached but did not drop (a crash between the two): dropped by the next run. */
  orphans: string[];
  /** Closed, kept partitions without a valid Keys index: built last, one at a time. */
  index: PlannedIndex[];
  /** Hours from now to the end of the contiguous premade range. */
  runwayHours: number;
}

const floorTo = (t: number, interval: PartitionInterval): number => {
  if (interval === "hour") return Math.floor(t / HOUR) * HOUR;
  const day = Math.floor(t / (24 * HOUR)) * 24 * HOUR;
  if (interval === "day") return day;
  // Weeks start on Monday (ISO); 1970-01-01 was a Thursday.
  const weekday = (new Date(day).getUTCDay() + 6) % 7;
  return day - weekday * 24 * HOUR;
};

const pad = (n: number) => String(n).padStart(2, "0");

/** effects_pYYYYMMDD for a UTC day (as the startup premake names it), _HH for hours, w for weeks. */
function partitionName(from: Date, to: Date): string {
  const ymd = `${from.getUTCFullYear()}${pad(from.getUTCMonth() + 1)}${pad(from.getUTCDate())}`;
  const length = to.getTime() - from.getTime();
  const midnight = from.getTime() % (24 * HOUR) === 0;
  if (midnight && length === 24 * HOUR) return `effects_p${ymd}`;
  if (midnight && length === 7 * 24 * HOUR) return `effects_w${ymd}`;
  if (from.getTime() % HOUR === 0 && length === HOUR) return `effects_p${ymd}_${pad(from.getUTCHours())}`;
  return `effects_p${ymd}_${pad(from.getUTCHours())}${pad(from.getUTCMinutes())}`;
}

export interface PartitionRow {
  name: string;
  detach_pending: boolean;
  range_from: Date | null;
  range_to: Date | null;
  estimated_rows: number;
  bytes: number;
  comment: string;
}

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

/** The premade slots from one interval back to premakeCount ahead, minus what existing partitions cover. */
function missingRanges(now: Date, settings: RetentionSettingsRow, existing: PartitionRow[]): PlannedCreate[] {
  const step = partitionIntervalSeconds(settings.interval) * 1000;
  const start = floorTo(now.getTime(), settings.interval);
  const covered = existing
    .filter((p) => p.range_from && p.range_to)
    .map((p) => [(p.range_from as Date).getTime(), (p.range_to as Date).getTime()] as const)
    .sort((a, b) => a[0] - b[0]);
  const lastCovered = covered.reduce((max, [, hi]) => Math.max(max, hi), Number.NEGATIVE_INFINITY);
  const out: PlannedCreate[] = [];
  for (let k = -1; k <= settings.premakeCount; k++) {
    let lo = start + k * step;
    const hi = lo + step;
    // Subtract the covered ranges from [lo, hi): what is left are the pieces to create.
    for (const [a, b] of covered) {
      if (b <= lo || a >= hi) continue;
      if (a > lo) {
        out.push({ name: "", from: new Date(lo), to: new Date(a), reason: lo < lastCovered ? "missing" : "ahead" });
      }
      lo = Math.max(lo, b);
      if (lo >= hi) break;
    }
    if (lo < hi) out.push({ name: "", from: new Date(lo), to: new Date(hi), reason: lo < lastCovered ? "missing" : "ahead" });
  }
  return out.map((c) => ({ ...c, name: partitionName(c.from, c.to) }));
}

/** Hours from now to the end of the contiguous range of attached partitions that starts at now. */
function runwayHours(now: Date, rows: PartitionRow[]): number {
  const ranges = rows
    .filter((p) => !p.detach_pending && p.range_from && p.range_to)
    .map((p) => [(p.range_from as Date).getTime(), (p.range_to as Date).getTime()] as const)
    .sort((a, b) => a[0] - b[0]);
  let end = now.getTime();
  let found = false;
  for (const [a, b] of ranges) {
    if (a <= end && b > end) {
      end = b;
      found = true;
    }
  }
  return found ? (end - now.getTime()) / HOUR : 0;
}

/** What a run would do at `now`, and why. Reads only (catalog, settings, live workers, in-flight counts). */
export async function planMaintenance(
  queryable: Queryable,
  options: { now?: Date; schema?: string } = {},
): Promise<MaintenancePlan> {
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

function fmtSeconds(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400}d`;
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  return `${Math.round(seconds)}s`;
}
