import { randomUUID } from "node:crypto";
import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { maintenanceMetrics, recordMaintenanceRun } from "./maintenance-metrics";
import type { Operation } from "./maintenance-operation";
import {
  floorTo,
  fmtSeconds,
  type MaintenancePlan,
  missingRanges,
  NEWEST_KEPT,
  type PartitionRow,
  type PartitionState,
  partitionName,
  runwayHours,
} from "./maintenance-ranges";
import type { MaintainOptions, MaintenanceRunResult } from "./maintenance-run";
import type { LiveWorker } from "./maintenance-settings";
import { fromMysqlTime, type MysqlHandle, type MysqlPoolLike, runMysql, toMysqlTime } from "./mysql";
import { mysqlErrnoOf } from "./mysql-errors";
import { takeLease } from "./mysql-lease";
import { schemaNameOf } from "./schema";
import {
  DAY_SECONDS,
  DEFAULT_RETENTION_SETTINGS,
  type PartitionInterval,
  partitionIntervalSeconds,
  type RetentionSettingsRow,
} from "./states";

/**
 * Retention and partitions on MySQL and MariaDB: maintain() for the MySQL store. The layout
 * (migrations-mysql/0001_baseline.sql) decides what a run does:
 * - delivery_timeline is partitioned by the settings' interval: partitions are premade ahead and
 *   an expired one is dropped whole (ALTER TABLE … ADD / DROP PARTITION). Both need the table's
 *   metadata lock, which waits behind every open transaction that touched the table and, while it
 *   waits, makes every later statement on the table wait behind it: each attempt is bounded by a
 *   short lock_wait_timeout and retried with backoff, and only timeline flushes ever wait.
 * - effects is one unpartitioned table (its primary key is the claim's uniqueness): its expired
 *   rows are deleted oldest first in batches, each batch its own short transaction, paced so that
 *   claims keep most of the server. The live-lease guard is in each DELETE's WHERE, decided under
 *   each row's lock: a claim revived by a takeover between the plan and the delete is never lost
 *   (there is no check-then-act to race).
 * - uncaught_violation_keys: deleted in batches past the same horizon.
 * One run at a time across the fleet: a lease (mysql-lease.ts), never GET_LOCK.
 */

const TIMELINE = "delivery_timeline";
/** Rows per DELETE: one short transaction each. */
const DELETE_BATCH = 2000;
/** After each batch, rest this fraction of the time it took: the deletes use at most about half the server's time. */
const DELETE_PACING = 1;
/** 1517: duplicate partition name; 1493: VALUES LESS THAN not increasing. Another runner added the partition first. */
const ALREADY_ADDED = new Set([1517, 1493]);
/** 1507: the partition is not there (another runner dropped it first). */
const ALREADY_DROPPED = new Set([1507]);
/** Worth another attempt: the metadata lock wait ran out (1205 is InnoDB's row lock), a deadlock, a changed table. */
const RETRY_DDL = new Set([1205, 1213, 1412]);

interface TimelinePartition extends PartitionRow {
  /** The first partition holds everything below its bound. */
  first: boolean;
}

/** The timeline's partitions in order, each with its bounds: [the previous bound, its own). */
async function listTimelinePartitions(db: MysqlHandle, schema: string): Promise<TimelinePartition[]> {
  const [rows] = await db.query(
    `SELECT PARTITION_NAME AS name, PARTITION_DESCRIPTION AS bound, TABLE_ROWS AS estimated_rows,
            DATA_LENGTH + INDEX_LENGTH AS bytes
       FROM information_schema.PARTITIONS
      WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND PARTITION_NAME IS NOT NULL
      ORDER BY PARTITION_ORDINAL_POSITION`,
    [schema, TIMELINE],
  );
  let previous: Date | null = null;
  return (rows as { name: string; bound: string; estimated_rows: number | string; bytes: number | string }[]).map((r, i) => {
    const to = boundOf(r.bound);
    // The first partition's lower bound is -∞: the epoch stands for it, so the planner sees it covered.
    // A later one starts at the previous bound, or at its own slot's start (its name) where that is
    // later: the first partition the library adds after the catch-all p_start (bound 2000-01-01) spans
    // from 2000 in RANGE terms, yet only its slot's rows are ever written to it.
    const from = i === 0 ? new Date(0) : laterOf(previous, slotStartOf(r.name, to));
    previous = to;
    return {
      name: r.name,
      detach_pending: false,
      range_from: from,
      range_to: to,
      estimated_rows: Number(r.estimated_rows ?? 0),
      bytes: Number(r.bytes ?? 0),
      comment: "",
      first: i === 0,
    };
  });
}

/** A partition's VALUES LESS THAN as an instant; null for MAXVALUE or anything else that is not one. */
function boundOf(bound: unknown): Date | null {
  const at = fromMysqlTime(String(bound).replace(/^'|'$/g, ""));
  return at && Number.isFinite(at.getTime()) ? at : null;
}

/** The start of the slot a partition's name (timelinePartitionName) says it holds; null when the name is not one of its. */
function slotStartOf(name: string, to: Date | null): Date | null {
  const m = /^[pw](\d{4})(\d{2})(\d{2})(?:_(\d{2})(\d{2})?)?$/.exec(name);
  if (!m) return null;
  const [, y, mo, d, h = "00", mi = "00"] = m;
  const at = new Date(`${y}-${mo}-${d}T${h}:${mi}:00Z`);
  return Number.isFinite(at.getTime()) && (!to || at.getTime() < to.getTime()) ? at : null;
}

const laterOf = (a: Date | null, b: Date | null): Date | null => (a && b ? (a > b ? a : b) : (a ?? b));

/** p20261204 for a day (the PostgreSQL store's effects_p20261204 without the table's name), _HH for hours, w for weeks. */
const timelinePartitionName = (from: Date, to: Date) => partitionName(from, to).replace(/^effects_/, "");

/** Runs one partition DDL with a short metadata-lock wait, retried; the session's wait is restored after. */
async function partitionDdl(
  db: MysqlHandle,
  ddl: string,
  options: { lockTimeoutSeconds: number; attempts: number },
  done: Set<number>,
): Promise<"ok" | "already"> {
  const [rows] = await db.query("SELECT @@SESSION.lock_wait_timeout AS saved");
  const saved = Number((rows as { saved: number }[])[0]?.saved ?? 31_536_000);
  await db.query(`SET SESSION lock_wait_timeout = ${Math.max(1, Math.ceil(options.lockTimeoutSeconds))}`);
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await db.query(ddl);
        return "ok";
      } catch (error) {
        const errno = mysqlErrnoOf(error) ?? 0;
        if (done.has(errno)) return "already";
        if (!RETRY_DDL.has(errno) || attempt >= options.attempts) throw error;
        await sleep(Math.min(100 * 2 ** attempt, 2000) * (0.5 + Math.random()), undefined, { ref: false });
      }
    }
  } finally {
    await db.query(`SET SESSION lock_wait_timeout = ${saved}`).catch(() => {});
  }
}

/**
 * Premakes timeline partitions so that [from, to) is covered, one `interval` each (migrate() and
 * maintain()). RANGE partitions are only ever added after the last one, so the range stays
 * contiguous. Returns the partitions added.
 */
export async function ensureTimelinePartitions(
  db: MysqlHandle,
  schema: string,
  options: { from: Date; to: Date; interval: PartitionInterval; lockTimeoutSeconds: number; attempts: number },
): Promise<{ name: string; from: Date; to: Date }[]> {
  const existing = await listTimelinePartitions(db, schema);
  const last = existing.at(-1)?.range_to?.getTime() ?? Number.NEGATIVE_INFINITY;
  const step = partitionIntervalSeconds(options.interval) * 1000;
  const added: { name: string; from: Date; to: Date }[] = [];
  for (let lo = floorTo(options.from.getTime(), options.interval); lo < options.to.getTime(); lo += step) {
    const hi = lo + step;
    if (hi <= last) continue;
    added.push({ name: timelinePartitionName(new Date(lo), new Date(hi)), from: new Date(lo), to: new Date(hi) });
  }
  if (added.length === 0) return [];
  const parts = added.map((p) => `PARTITION ${p.name} VALUES LESS THAN ('${toMysqlTime(p.to)}')`).join(", ");
  const result = await partitionDdl(db, `ALTER TABLE ${schema}.${TIMELINE} ADD PARTITION (${parts})`, options, ALREADY_ADDED);
  return result === "ok" ? added : [];
}

async function readSettings(db: MysqlHandle, schema: string): Promise<RetentionSettingsRow> {
  const [rows] = await runMysql(
    db,
    "SELECT retention_days, max_retry_window_days, partition_interval, premake_count FROM onceboard.retention_settings WHERE id = 1",
    [],
    schema,
  );
  const row = (
    rows as {
      retention_days: number;
      max_retry_window_days: number;
      partition_interval: PartitionInterval;
      premake_count: number;
    }[]
  )[0];
  if (!row) return { ...DEFAULT_RETENTION_SETTINGS };
  return {
    retentionSeconds: Number(row.retention_days) * DAY_SECONDS,
    maxRetryWindowSeconds: Number(row.max_retry_window_days) * DAY_SECONDS,
    interval: row.partition_interval,
    premakeCount: Number(row.premake_count),
  };
}

async function readLiveWorkersMysql(db: MysqlHandle, schema: string, now: Date): Promise<LiveWorker[]> {
  const [rows] = await runMysql(
    db,
    `SELECT worker_id, max_retry_window_seconds, host, pid, CAST(started_at AS CHAR) AS started_at, CAST(heartbeat_at AS CHAR) AS heartbeat_at
       FROM onceboard.worker_registrations
      WHERE heartbeat_at + INTERVAL ttl_seconds SECOND > ?
      ORDER BY max_retry_window_seconds DESC, worker_id`,
    [toMysqlTime(now)],
    schema,
  );
  return (
    rows as {
      worker_id: string;
      max_retry_window_seconds: number;
      host: string | null;
      pid: number | null;
      started_at: string;
      heartbeat_at: string;
    }[]
  ).map((r) => ({
    workerId: r.worker_id,
    maxRetryWindowSeconds: Number(r.max_retry_window_seconds),
    host: r.host,
    pid: r.pid === null ? null : Number(r.pid),
    startedAt: fromMysqlTime(r.started_at) as Date,
    heartbeatAt: fromMysqlTime(r.heartbeat_at) as Date,
  }));
}

/**
 * What a run would do at `now`, in the PostgreSQL plan's shape: `partitions` are the timeline's
 * (effects has none here; its expired rows, older than `dropBefore`, are deleted by the run).
 */
export async function planMaintenanceMysql(
  db: MysqlHandle,
  options: { now?: Date; schema?: string } = {},
): Promise<MaintenancePlan> {
  const now = options.now ?? new Date();
  const schema = schemaNameOf(options.schema);
  const settings = await readSettings(db, schema);
  const liveWorkers = await readLiveWorkersMysql(db, schema, now);
  const rows = await listTimelinePartitions(db, schema);
  const largestWindow = Math.max(settings.maxRetryWindowSeconds, ...liveWorkers.map((w) => w.maxRetryWindowSeconds), 0);
  const keepSeconds = Math.max(settings.retentionSeconds, largestWindow);
  const dropBefore = new Date(now.getTime() - keepSeconds * 1000);
  const newest = new Set(rows.slice(-NEWEST_KEPT).map((r) => r.name));
  const partitions: PartitionState[] = rows.map((r) => {
    const base = {
      name: r.name,
      from: r.first ? null : r.range_from,
      to: r.range_to,
      detachPending: false,
      estimatedRows: r.estimated_rows,
      bytes: r.bytes,
      liveClaims: null,
    };
    // Dropping the first partition would make the next one the catch-all for every row below it.
    if (r.first)
      return {
        ...base,
        action: "keep",
        guard: "catch-all",
        reason: "the first partition: holds whatever lies below the others' ranges; never dropped",
      };
    const to = r.range_to;
    // No bound (MAXVALUE) holds every future row.
    if (!to || to.getTime() > now.getTime())
      return { ...base, action: "keep", guard: "current", reason: "holds now or the future" };
    if (to.getTime() > dropBefore.getTime()) {
      const byWindow = largestWindow > settings.retentionSeconds;
      return {
        ...base,
        action: "keep",
        guard: byWindow ? "retry-window" : "retention",
        reason: byWindow
          ? `newer than now − ${fmtSeconds(largestWindow)} (the largest declared retry window)`
          : `newer than now − ${fmtSeconds(settings.retentionSeconds)} (the retention)`,
      };
    }
    if (newest.has(r.name))
      return { ...base, action: "keep", guard: "newest", reason: `one of the ${NEWEST_KEPT} newest partitions` };
    return { ...base, action: "drop", guard: null, reason: `expired: ends before now − ${fmtSeconds(keepSeconds)}` };
  });
  // RANGE partitions only grow at the end: what lies before the last bound is covered already.
  const last = rows.at(-1)?.range_to?.getTime() ?? Number.NEGATIVE_INFINITY;
  const create = missingRanges(now, settings, rows).filter((c) => c.from.getTime() >= last);
  return {
    now,
    settings,
    liveWorkers,
    keepSeconds,
    dropBefore,
    create: create.map((c) => ({ ...c, name: timelinePartitionName(c.from, c.to), reason: "ahead" })),
    partitions,
    orphans: [],
    index: [],
    runwayHours: runwayHours(now, rows),
  };
}

/**
 * Deletes rows older than `before` from `table`, oldest first, DELETE_BATCH at a time, each its own
 * transaction, resting after each as long as it took (DELETE_PACING): `guard` (SQL, bound to
 * `guardValues`) keeps a row whatever its age. Returns the rows deleted and the batches.
 */
async function deleteInBatches(
  db: MysqlHandle,
  schema: string,
  table: string,
  column: string,
  before: Date,
  guard: string,
  guardValues: unknown[],
): Promise<{ rows: number; batches: number }> {
  let rows = 0;
  let batches = 0;
  for (;;) {
    const started = performance.now();
    const [result] = await runMysql(
      db,
      `DELETE FROM onceboard.${table} WHERE ${column} < ?${guard} ORDER BY ${column} LIMIT ${DELETE_BATCH}`,
      [toMysqlTime(before), ...guardValues],
      schema,
    );
    const deleted = Number((result as { affectedRows?: number }).affectedRows ?? 0);
    rows += deleted;
    batches++;
    if (deleted < DELETE_BATCH) return { rows, batches };
    await sleep((performance.now() - started) * DELETE_PACING, undefined, { ref: false });
  }
}

/** One maintenance run on MySQL / MariaDB. Never throws for a failed run: the result says so (and it is recorded). */
export async function maintainMysql(pool: MysqlPoolLike, options: MaintainOptions = {}): Promise<MaintenanceRunResult> {
  const now = options.now ?? new Date();
  const logger = options.logger;
  const metrics = options.registry ? maintenanceMetrics(options.registry) : null;
  const runner = options.runner ?? `${os.hostname()}:${process.pid}`;
  const trigger = options.trigger ?? "manual";
  const ddl = {
    lockTimeoutSeconds: Math.max(1, Math.ceil((options.lockTimeoutMs ?? 2000) / 1000)),
    attempts: options.attempts ?? 5,
  };
  const schema = schemaNameOf(options.schema);
  const failed = (error: unknown): MaintenanceRunResult => {
    const message = error instanceof Error ? error.message : String(error);
    metrics?.runs.inc({ result: "failed" });
    logger?.warn({ err: message }, "maintenance run could not start");
    return { result: "failed", runId: null, operations: [], plan: null, error: message };
  };
  let connection: Awaited<ReturnType<MysqlPoolLike["getConnection"]>>;
  try {
    connection = await pool.getConnection();
  } catch (error) {
    return failed(error);
  }
  let lease: Awaited<ReturnType<typeof takeLease>> = null;
  try {
    lease = await takeLease(connection, schema, "maintenance", `${runner}:${randomUUID()}`, { ttlSeconds: 600, waitMs: 0 });
    if (!lease) {
      logger?.debug("maintenance: another runner holds the lease; skipping");
      return { result: "skipped", runId: null, operations: [], plan: null };
    }
    await options.afterLock?.();
    const [inserted] = await runMysql(
      connection,
      "INSERT INTO onceboard.maintenance_runs (runner, `trigger`, started_at, operations) VALUES (?, ?, ?, '[]')",
      [runner, trigger, toMysqlTime(now)],
      schema,
    );
    const runId = String((inserted as { insertId?: number }).insertId ?? "?");
    const ops: Operation[] = [];
    let plan: MaintenancePlan | null = null;
    let failure: unknown = null;
    try {
      plan = await planMaintenanceMysql(connection, { now, schema });
      const step = partitionIntervalSeconds(plan.settings.interval) * 1000;
      const start = floorTo(now.getTime(), plan.settings.interval);
      try {
        for (const p of await ensureTimelinePartitions(connection, schema, {
          from: new Date(start - step),
          to: new Date(start + (plan.settings.premakeCount + 1) * step),
          interval: plan.settings.interval,
          ...ddl,
        })) {
          ops.push({
            kind: "create",
            partition: p.name,
            result: "ok",
            detail: `ahead ${p.from.toISOString()}..${p.to.toISOString()}`,
          });
        }
      } catch (error) {
        ops.push({ kind: "create", partition: TIMELINE, result: "failed", detail: errorText(error) });
        failure ??= error;
      }
      for (const p of plan.partitions) {
        if (p.action !== "drop") continue;
        try {
          const done = await partitionDdl(
            connection,
            `ALTER TABLE ${schema}.${TIMELINE} DROP PARTITION ${p.name}`,
            ddl,
            ALREADY_DROPPED,
          );
          ops.push({
            kind: "drop",
            partition: p.name,
            result: done === "ok" ? "ok" : "skipped",
            ...(done === "ok" ? {} : { detail: "already dropped" }),
          });
        } catch (error) {
          // One stuck partition must not stop the others; the run is reported failed.
          ops.push({ kind: "drop", partition: p.name, result: "failed", detail: errorText(error) });
          failure ??= error;
        }
      }
      const effects = await deleteInBatches(
        connection,
        schema,
        "effects",
        "created_at",
        plan.dropBefore,
        " AND NOT (status = 'in_progress' AND lease_until > ?)",
        [toMysqlTime(now)],
      );
      if (effects.rows > 0) {
        ops.push({
          kind: "prune",
          partition: "effects",
          result: "ok",
          detail: `${effects.rows} row(s) in ${effects.batches} batch(es)`,
        });
      }
      // Violation rows live as long as the effects they are about.
      const violations = await deleteInBatches(
        connection,
        schema,
        "uncaught_violation_keys",
        "occurred_at",
        plan.dropBefore,
        "",
        [],
      );
      if (violations.rows > 0) {
        ops.push({ kind: "prune", partition: "uncaught_violation_keys", result: "ok", detail: `${violations.rows} row(s)` });
      }
    } catch (error) {
      failure ??= error;
    }
    const result = failure ? "failed" : "success";
    const error = failure ? errorText(failure) : null;
    await runMysql(
      connection,
      "UPDATE onceboard.maintenance_runs SET finished_at = ?, result = ?, operations = ?, error = ? WHERE id = ?",
      [toMysqlTime(new Date(Math.max(Date.now(), now.getTime()))), result, JSON.stringify(ops), error, runId],
      schema,
    );
    await recordMaintenanceRun(metrics, { now, operations: ops, failed: Boolean(failure) }, () =>
      planMaintenanceMysql(connection, { now, schema }),
    );
    if (failure) logger?.warn({ runId, err: error, operations: ops.length }, "maintenance run failed");
    else if (ops.length > 0) logger?.info({ runId, operations: ops }, "maintenance run");
    return { result, runId, operations: ops, plan, ...(error ? { error } : {}) };
  } catch (error) {
    return failed(error);
  } finally {
    await lease?.release().catch(() => {});
    connection.release();
  }
}

function errorText(error: unknown): string {
  const errno = mysqlErrnoOf(error);
  return `${errno ? `${errno} ` : ""}${error instanceof Error ? error.message : String(error)}`;
}
