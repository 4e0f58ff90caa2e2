import os from "node:os";
import type pg from "pg";
import type { Registry } from "prom-client";
import { defaultLogger, type Logger } from "./logger";
import { type MaintenanceMetrics, maintenanceMetrics } from "./maintenance-metrics";
import {
  countLiveClaimsSql,
  DETACH_COMMENT_PREFIX,
  FINISH_RUN,
  INSERT_RUN,
  LIST_DETACHED_ORPHANS,
  LIST_PARTITIONS,
  LIST_TENANT_INDEXES,
  LIVE_WINDOWS,
  LOCK_PARTITIONS,
  MAINTENANCE_LOCK_KEY,
  PARTITIONS_LOCK_KEY,
  quoteIdent,
  quoteLiteral,
  READ_SETTINGS,
  RELEASE_MAINTENANCE_LOCK,
  TENANT_INDEX_SHAPE,
  TENANT_INDEX_SUFFIX,
  TRY_MAINTENANCE_LOCK,
} from "./maintenance-sql";
import { queryingIn, schemaNameOf } from "./schema";
import { pruneUncaughtViolations } from "./violations";

/**
 * The partition manager of the effects table, in the library so that every worker can run it
 * (a fleet with no console never runs out of partitions). Modelled on pg-boss's supervise():
 * `maintain()` is one run, callable by hand; `startMaintenance()` runs it on a schedule.
 *
 * One run: take a session advisory lock (or skip: another runner is acting), premake the
 * partitions ahead (and any missing in the middle), finish any interrupted detach (FINALIZE),
 * detach expired partitions CONCURRENTLY (lock_timeout + retries) and drop them, then build the
 * Keys index on each closed partition that lacks it (CREATE INDEX CONCURRENTLY: last, so it never
 * delays a premake). Each run is recorded in maintenance_runs. The clock is a parameter, so tests
 * can move time.
 */

export type PartitionInterval = "hour" | "day" | "week";
export const PARTITION_INTERVALS: readonly PartitionInterval[] = ["hour", "day", "week"];

const HOUR = 3_600_000;
const INTERVAL_MS: Record<PartitionInterval, number> = { hour: HOUR, day: 24 * HOUR, week: 7 * 24 * HOUR };

/** The newest partitions (by upper bound) that are never dropped, whatever the settings say. */
export const NEWEST_KEPT = 2;

export interface RetentionSettingsRow {
  retentionSeconds: number;
  /** The fleet-wide declared retry window of the settings row. */
  maxRetryWindowSeconds: number;
  interval: PartitionInterval;
  premakeCount: number;
}

export const DEFAULT_RETENTION_SETTINGS: RetentionSettingsRow = {
  retentionSeconds: 7 * 86_400,
  maxRetryWindowSeconds: 3 * 86_400,
  interval: "day",
  premakeCount: 7,
};

export interface LiveWorker {
  workerId: string;
  maxRetryWindowSeconds: number;
  host: string | null;
  pid: number | null;
  startedAt: Date;
  heartbeatAt: Date;
}

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

export type OperationKind = "create" | "detach" | "finalize" | "drop" | "reattach" | "index" | "prune";
export interface Operation {
  kind: OperationKind;
  partition: string;
  result: "ok" | "failed" | "skipped";
  detail?: string;
}

export interface MaintenanceRunResult {
  /** skipped: another runner held the lock. */
  result: "success" | "failed" | "skipped";
  runId: string | null;
  operations: Operation[];
  plan: MaintenancePlan | null;
  error?: string;
}

export interface MaintainOptions {
  /** The manager's clock. Default: the real time. */
  now?: Date;
  /** Names the runner in maintenance_runs. Default host:pid. */
  runner?: string;
  /** What started this run: schedule, cli, api, test… */
  trigger?: string;
  logger?: Logger;
  /** Registry for the idem_partition_* / idem_maintenance_* metrics; none: not counted. */
  registry?: Registry;
  /** lock_timeout for each DETACH / ATTACH attempt. Default 2000 ms. */
  lockTimeoutMs?: number;
  /**
   * lock_timeout for each CREATE / DROP INDEX CONCURRENTLY attempt on a closed partition. Default
   * 60000 ms. Longer than a DETACH's because its waits (its lock on that one partition, then for
   * older transactions to end) never hold up a claim, only this run; and its last wait comes after
   * the whole build, so a short timeout behind one long transaction would build and throw away the
   * index on every attempt.
   */
  indexLockTimeoutMs?: number;
  /** Attempts per DETACH or index build before giving up for this run (the next run finishes it). Default 5. */
  attempts?: number;
  /** Test hook: runs while the maintenance lock is held, before anything else. */
  afterLock?: () => Promise<void>;
  /** The library's schema (schema.ts). Default onceboard. */
  schema?: string;
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
export function partitionName(from: Date, to: Date): string {
  const ymd = `${from.getUTCFullYear()}${pad(from.getUTCMonth() + 1)}${pad(from.getUTCDate())}`;
  const length = to.getTime() - from.getTime();
  const midnight = from.getTime() % (24 * HOUR) === 0;
  if (midnight && length === 24 * HOUR) return `effects_p${ymd}`;
  if (midnight && length === 7 * 24 * HOUR) return `effects_w${ymd}`;
  if (from.getTime() % HOUR === 0 && length === HOUR) return `effects_p${ymd}_${pad(from.getUTCHours())}`;
  return `effects_p${ymd}_${pad(from.getUTCHours())}${pad(from.getUTCMinutes())}`;
}

interface PartitionRow {
  name: string;
  detach_pending: boolean;
  range_from: Date | null;
  range_to: Date | null;
  estimated_rows: number;
  bytes: number;
  comment: string;
}

type Queryable = Pick<pg.Pool | pg.PoolClient, "query">;

export async function readRetentionSettings(queryable: Queryable, schema?: string): Promise<RetentionSettingsRow> {
  const db = queryingIn(queryable, schemaNameOf(schema));
  const { rows } = await db.query<{
    retention_days: number;
    max_retry_window_days: number;
    partition_interval: PartitionInterval;
    premake_count: number;
  }>(READ_SETTINGS);
  const row = rows[0];
  if (!row) return { ...DEFAULT_RETENTION_SETTINGS };
  return {
    retentionSeconds: row.retention_days * 86_400,
    maxRetryWindowSeconds: row.max_retry_window_days * 86_400,
    interval: row.partition_interval,
    premakeCount: row.premake_count,
  };
}

export async function readLiveWorkers(queryable: Queryable, now: Date, schema?: string): Promise<LiveWorker[]> {
  const db = queryingIn(queryable, schemaNameOf(schema));
  const { rows } = await db.query<{
    worker_id: string;
    max_retry_window_seconds: number;
    host: string | null;
    pid: number | null;
    started_at: Date;
    heartbeat_at: Date;
  }>(LIVE_WINDOWS, [now]);
  return rows.map((r) => ({
    workerId: r.worker_id,
    maxRetryWindowSeconds: r.max_retry_window_seconds,
    host: r.host,
    pid: r.pid,
    startedAt: r.started_at,
    heartbeatAt: r.heartbeat_at,
  }));
}

async function listPartitions(db: Queryable): Promise<PartitionRow[]> {
  return (await db.query<PartitionRow>(LIST_PARTITIONS)).rows;
}

interface TenantIndexRow {
  partition: string;
  index_name: string;
  valid: boolean;
}

/** The Keys indexes of each partition (any name), valid and INVALID apart. */
async function tenantIndexes(db: Queryable): Promise<Map<string, { valid: string[]; invalid: string[] }>> {
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
  const step = INTERVAL_MS[settings.interval];
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
  const rows = await listPartitions(db);
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

export function fmtSeconds(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400}d`;
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  return `${Math.round(seconds)}s`;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const sqlState = (error: unknown) => (error as { code?: string } | undefined)?.code;
/** lock_not_available (our lock_timeout), query_canceled and deadlock_detected: worth another attempt. */
const RETRY_DDL = new Set(["55P03", "57014", "40P01"]);

/**
 * Creates one partition without blocking claims for long: an empty table LIKE effects with a
 * CHECK matching its bounds, its unique index, then ATTACH (SHARE UPDATE EXCLUSIVE on effects,
 * not the ACCESS EXCLUSIVE a CREATE … PARTITION OF takes). All under the partitions lock, and
 * the gap is re-checked under it, so a concurrent startup premake never collides.
 */
async function createPartition(client: pg.PoolClient, part: PlannedCreate, lockTimeoutMs: number): Promise<Operation> {
  const name = `onceboard.${quoteIdent(part.name)}`;
  const from = quoteLiteral(part.from.toISOString());
  const to = quoteLiteral(part.to.toISOString());
  await client.query("BEGIN");
  try {
    await client.query(LOCK_PARTITIONS, [PARTITIONS_LOCK_KEY]);
    const overlap = (await listPartitions(client)).some(
      (p) => p.range_from && p.range_to && p.range_from < part.to && p.range_to > part.from,
    );
    if (overlap) {
      await client.query("ROLLBACK");
      return { kind: "create", partition: part.name, result: "skipped", detail: "already covered" };
    }
    await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
    await client.query(
      `CREATE TABLE ${name} (LIKE onceboard.effects INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)`,
    );
    await client.query(
      `ALTER TABLE ${name} ADD CONSTRAINT ${quoteIdent(`${part.name}_range`)} CHECK (created_at >= ${from} AND created_at < ${to})`,
    );
    await client.query(`CREATE UNIQUE INDEX ${quoteIdent(`${part.name}_tenant_key_uq`)} ON ${name} (tenant_id, key)`);
    await client.query(`ALTER TABLE onceboard.effects ATTACH PARTITION ${name} FOR VALUES FROM (${from}) TO (${to})`);
    // The CHECK only served to skip ATTACH's validation scan; the bound now enforces it.
    await client.query(`ALTER TABLE ${name} DROP CONSTRAINT ${quoteIdent(`${part.name}_range`)}`);
    await client.query("COMMIT");
    return {
      kind: "create",
      partition: part.name,
      result: "ok",
      detail: `${part.reason} ${part.from.toISOString()}..${part.to.toISOString()}`,
    };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}

async function isDetachPending(client: pg.PoolClient, name: string): Promise<boolean | null> {
  const { rows } = await client.query<{ pending: boolean }>(
    "SELECT i.inhdetachpending AS pending FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'onceboard.effects'::regclass AND c.relname = $1",
    [name],
  );
  return rows[0] ? rows[0].pending : null;
}

/**
 * DETACH … CONCURRENTLY, outside any transaction, each attempt bounded by lock_timeout. An attempt
 * interrupted after its first transaction leaves the partition detach-pending: the next attempt
 * (or the next run) completes it with FINALIZE.
 */
async function detach(client: pg.PoolClient, name: string, lockTimeoutMs: number, attempts: number, ops: Operation[]) {
  const table = `onceboard.${quoteIdent(name)}`;
  await client.query(`SET lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
  try {
    for (let attempt = 1; ; attempt++) {
      const pending = await isDetachPending(client, name);
      if (pending === null) return; // already detached
      const kind: OperationKind = pending ? "finalize" : "detach";
      try {
        await client.query(
          pending
            ? `ALTER TABLE onceboard.effects DETACH PARTITION ${table} FINALIZE`
            : `ALTER TABLE onceboard.effects DETACH PARTITION ${table} CONCURRENTLY`,
        );
        ops.push({ kind, partition: name, result: "ok", ...(attempt > 1 ? { detail: `attempt ${attempt}` } : {}) });
        return;
      } catch (error) {
        const state = sqlState(error);
        if (!RETRY_DDL.has(state ?? "") || attempt >= attempts) {
          ops.push({ kind, partition: name, result: "failed", detail: `${state ?? ""} ${(error as Error).message}`.trim() });
          throw error;
        }
        await sleep(Math.min(100 * 2 ** attempt, 2000));
      }
    }
  } finally {
    await client.query("RESET lock_timeout").catch(() => {});
  }
}

/**
 * Builds the Keys index on one closed partition without blocking claims: CREATE INDEX CONCURRENTLY
 * (outside any transaction; SHARE UPDATE EXCLUSIVE on that partition only, which no claim or
 * duplicate conflicts with), each attempt bounded by lock_timeout, which also bounds its waits for
 * older transactions. A failed or cancelled build leaves its index INVALID; the next attempt (or
 * run) drops it CONCURRENTLY and builds again. The catalog is read again before each attempt and
 * after the build: the result is what PostgreSQL holds, not what the plan assumed.
 */
async function indexClosedPartition(
  client: pg.PoolClient,
  planned: PlannedIndex,
  lockTimeoutMs: number,
  attempts: number,
  ops: Operation[],
) {
  const table = `onceboard.${quoteIdent(planned.partition)}`;
  const failed = (detail: string) => ops.push({ kind: "index", partition: planned.partition, result: "failed", detail });
  const dropped = new Set<string>();
  await client.query(`SET lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
  try {
    for (let attempt = 1; ; attempt++) {
      let started = 0;
      try {
        const before = (await tenantIndexes(client)).get(planned.partition);
        if (before && before.valid.length > 0) {
          ops.push({ kind: "index", partition: planned.partition, result: "skipped", detail: `has ${before.valid[0]}` });
          return;
        }
        for (const invalid of before?.invalid ?? []) {
          await client.query(`DROP INDEX CONCURRENTLY IF EXISTS onceboard.${quoteIdent(invalid)}`);
          dropped.add(invalid);
        }
        started = Date.now();
        await client.query(
          `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${quoteIdent(planned.index)} ON ${table} ${TENANT_INDEX_SHAPE}`,
        );
      } catch (error) {
        const state = sqlState(error);
        if (!RETRY_DDL.has(state ?? "") || attempt >= attempts) {
          failed(`${state ?? ""} ${(error as Error).message}`.trim());
          throw error;
        }
        await sleep(Math.min(100 * 2 ** attempt, 2000));
        continue;
      }
      const after = (await tenantIndexes(client)).get(planned.partition);
      if (!after || after.valid.length === 0) {
        // IF NOT EXISTS met another relation of that name, not of the Keys index's shape.
        failed(`${planned.index} exists but is not a valid Keys index: rename or drop it`);
        throw new Error(`${planned.index} on ${planned.partition} is not a valid Keys index after CREATE INDEX CONCURRENTLY`);
      }
      const notes = [`${after.valid[0]} in ${Date.now() - started} ms`];
      if (dropped.size > 0) notes.push(`rebuilt: dropped the INVALID ${[...dropped].join(", ")} of an interrupted build`);
      if (attempt > 1) notes.push(`attempt ${attempt}`);
      ops.push({ kind: "index", partition: planned.partition, result: "ok", detail: notes.join("; ") });
      return;
    }
  } finally {
    await client.query("RESET lock_timeout").catch(() => {});
  }
}

function boundsOf(p: PartitionState): string {
  return `FROM (${quoteLiteral((p.from as Date).toISOString())}) TO (${quoteLiteral((p.to as Date).toISOString())})`;
}

/** Drops an expired partition: mark it ours, detach, look again for live claims (re-attach), drop. */
async function expire(
  client: pg.PoolClient,
  p: PartitionState,
  now: Date,
  opts: Required<Pick<MaintainOptions, "lockTimeoutMs" | "attempts">>,
  runId: string,
  ops: Operation[],
) {
  const table = `onceboard.${quoteIdent(p.name)}`;
  if (p.action === "drop") {
    await client.query(`COMMENT ON TABLE ${table} IS ${quoteLiteral(`${DETACH_COMMENT_PREFIX} run ${runId}`)}`);
  }
  await detach(client, p.name, opts.lockTimeoutMs, opts.attempts, ops);
  const { rows } = await client.query<{ comment: string | null }>(
    "SELECT obj_description(to_regclass('onceboard.' || quote_ident($1)), 'pg_class') AS comment",
    [p.name],
  );
  if (!rows[0]?.comment?.startsWith(DETACH_COMMENT_PREFIX)) {
    // Somebody else's detach (not marked by us): finished, but the table is theirs to drop.
    return;
  }
  // No check-then-act: a takeover could have revived a claim between the plan and the detach.
  // Now that no claim can reach the table any more, look again; if one is alive, put it back.
  const live = p.from && p.to ? ((await client.query<{ n: number }>(countLiveClaimsSql(p.name), [now])).rows[0]?.n ?? 0) : 0;
  if (live > 0 && p.from && p.to) {
    await client.query(`COMMENT ON TABLE ${table} IS NULL`);
    await client.query(`ALTER TABLE onceboard.effects ATTACH PARTITION ${table} ${boundsOf(p)}`);
    ops.push({ kind: "reattach", partition: p.name, result: "ok", detail: `${live} live claim(s) appeared` });
    return;
  }
  await client.query(`DROP TABLE ${table}`);
  ops.push({ kind: "drop", partition: p.name, result: "ok" });
}

/** One maintenance run. Never throws for a failed run: the result says so (and it is recorded). */
export async function maintain(pool: pg.Pool, options: MaintainOptions = {}): Promise<MaintenanceRunResult> {
  const now = options.now ?? new Date();
  const logger = options.logger ?? defaultLogger("onceboard-maintenance");
  const metrics: MaintenanceMetrics | null = options.registry ? maintenanceMetrics(options.registry) : null;
  const runner = options.runner ?? `${os.hostname()}:${process.pid}`;
  const trigger = options.trigger ?? "manual";
  const lockTimeoutMs = options.lockTimeoutMs ?? 2000;
  const indexLockTimeoutMs = options.indexLockTimeoutMs ?? 60_000;
  const attempts = options.attempts ?? 5;

  const schema = schemaNameOf(options.schema);
  let client: pg.PoolClient;
  try {
    client = queryingIn(await pool.connect(), schema);
  } catch (error) {
    // The database is not there: a failed run (the schedule tries again), never a rejection.
    const message = error instanceof Error ? error.message : String(error);
    metrics?.runs.inc({ result: "failed" });
    logger.warn({ err: message }, "maintenance run could not connect");
    return { result: "failed", runId: null, operations: [], plan: null, error: message };
  }
  let broken = false;
  const onError = () => {
    broken = true;
  };
  client.on("error", onError);
  let locked = false;
  try {
    locked = (await client.query<{ locked: boolean }>(TRY_MAINTENANCE_LOCK, [MAINTENANCE_LOCK_KEY])).rows[0]?.locked === true;
    if (!locked) {
      logger.debug("maintenance: another runner holds the lock; skipping");
      return { result: "skipped", runId: null, operations: [], plan: null };
    }
    await options.afterLock?.();
    const runId = (await client.query<{ id: string }>(INSERT_RUN, [runner, trigger, now])).rows[0]?.id ?? "?";
    const ops: Operation[] = [];
    let plan: MaintenancePlan | null = null;
    let failure: unknown = null;
    try {
      plan = await planMaintenance(client, { now, schema });
      for (const part of plan.create) ops.push(await createPartition(client, part, lockTimeoutMs));
      for (const p of plan.partitions) {
        if (p.action === "keep") continue;
        try {
          await expire(client, p, now, { lockTimeoutMs, attempts }, runId, ops);
        } catch (error) {
          // One stuck partition must not stop the others; the run is reported failed.
          failure ??= error;
        }
      }
      for (const orphan of plan.orphans) {
        await client.query(`DROP TABLE IF EXISTS onceboard.${quoteIdent(orphan)}`);
        ops.push({ kind: "drop", partition: orphan, result: "ok", detail: "detached by an earlier run" });
      }
      // Violation rows live as long as the effects they are about.
      const pruned = await pruneUncaughtViolations(client, plan.dropBefore);
      if (pruned > 0) ops.push({ kind: "prune", partition: "uncaught_violation_keys", result: "ok", detail: `${pruned} row(s)` });
      // Last: a build can take a while on a big partition, and must never delay a premake.
      for (const planned of plan.index) {
        try {
          await indexClosedPartition(client, planned, indexLockTimeoutMs, attempts, ops);
        } catch (error) {
          // The next partition's build still runs; this one is retried by the next run.
          failure ??= error;
        }
      }
    } catch (error) {
      failure ??= error;
    }
    const result = failure ? "failed" : "success";
    const errorText = failure ? (failure instanceof Error ? failure.message : String(failure)) : null;
    await client.query(FINISH_RUN, [
      runId,
      new Date(Math.max(Date.now(), now.getTime())),
      result,
      JSON.stringify(ops),
      errorText,
    ]);
    for (const op of ops) metrics?.operations.inc({ kind: op.kind, result: op.result });
    if (metrics) {
      const after = await planMaintenance(client, { now, schema }).catch(() => null);
      if (after) {
        metrics.runwayHours.set(after.runwayHours);
        metrics.runwayEnd.set(now.getTime() / 1000 + after.runwayHours * 3600);
        metrics.intervalSeconds.set(INTERVAL_MS[after.settings.interval] / 1000);
      }
      if (!failure) metrics.lastSuccess.set(now.getTime() / 1000);
      metrics.runs.inc({ result });
    }
    if (failure) logger.warn({ runId, err: errorText, operations: ops.length }, "maintenance run failed");
    else if (ops.length > 0) logger.info({ runId, operations: ops }, "maintenance run");
    return { result, runId, operations: ops, plan, ...(errorText ? { error: errorText } : {}) };
  } catch (error) {
    metrics?.runs.inc({ result: "failed" });
    logger.warn({ err: error instanceof Error ? error.message : String(error) }, "maintenance run could not start");
    return {
      result: "failed",
      runId: null,
      operations: [],
      plan: null,
      error: error instanceof Error ? error.message : String(error),
    };
  } finally {
    if (locked)
      await client.query(RELEASE_MAINTENANCE_LOCK, [MAINTENANCE_LOCK_KEY]).catch(() => {
        broken = true;
      });
    client.off("error", onError);
    client.release(broken ? true : undefined);
  }
}

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
  pool: pg.Pool,
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
