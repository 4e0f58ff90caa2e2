import os from "node:os";
import type pg from "pg";
import { isEffectsDistributed } from "./citus";
import { connectListening } from "./db";
import { defaultLogger } from "./logger";
import { type MaintenanceMetrics, maintenanceMetrics, recordMaintenanceRun } from "./maintenance-metrics";
import { maintainMysql } from "./maintenance-mysql";
import type { Operation, OperationKind } from "./maintenance-operation";
import {
  listPartitions,
  type MaintenancePlan,
  type PartitionState,
  type PlannedCreate,
  type PlannedIndex,
  planMaintenance,
  tenantIndexes,
} from "./maintenance-plan";
import type { MaintainOptions, MaintenanceRunResult } from "./maintenance-run";
import {
  addRangeCheck,
  attachPartition,
  commentOnTable,
  countLiveClaimsSql,
  createPartitionTable,
  createPartitionUniqueIndex,
  createTenantIndex,
  DETACH_COMMENT_PREFIX,
  detachPartition,
  dropIndexConcurrently,
  dropRangeCheck,
  dropTable,
  FINISH_RUN,
  INSERT_RUN,
  IS_DETACH_PENDING,
  LOCK_PARTITIONS,
  maintenanceLockKey,
  partitionReplicaIdentity,
  partitionsLockKey,
  RELEASE_MAINTENANCE_LOCK,
  TABLE_COMMENT,
  TRY_MAINTENANCE_LOCK,
} from "./maintenance-sql";
import { syncTimelinePartitions } from "./maintenance-timeline";
import { isMysqlPool, type MariadbPoolLike, type MysqlPoolLike, mysqlHandleOf } from "./mysql";
import { sqlStateOf } from "./pg-errors";
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

export type { Operation, OperationKind } from "./maintenance-operation";
export type { MaintainOptions, MaintenanceRunResult } from "./maintenance-run";

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** lock_not_available (our lock_timeout), query_canceled and deadlock_detected: worth another attempt. */
const RETRY_DDL = new Set(["55P03", "57014", "40P01"]);

/**
 * The one retry of the manager's DDL: runs `attempt` (numbered from 1) until it returns, fails
 * with a state not in RETRY_DDL, or has failed `attempts` times; backs off between attempts.
 * `onGiveUp` records the failure (with its SQLSTATE) before the error is thrown on.
 */
async function retryDdl<T>(
  attempts: number,
  attempt: (n: number) => Promise<T>,
  onGiveUp: (error: unknown, detail: string) => void,
): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      const state = sqlStateOf(error);
      if (!RETRY_DDL.has(state ?? "") || n >= attempts) {
        onGiveUp(error, `${state ?? ""} ${(error as Error).message}`.trim());
        throw error;
      }
      await sleep(Math.min(100 * 2 ** n, 2000));
    }
  }
}

/**
 * Creates one partition without blocking claims for long: an empty table LIKE effects with a
 * CHECK matching its bounds, its unique index, then ATTACH (SHARE UPDATE EXCLUSIVE on effects,
 * not the ACCESS EXCLUSIVE a CREATE … PARTITION OF takes). All under the partitions lock, and
 * the gap is re-checked under it, so a concurrent startup premake never collides.
 */
async function createPartition(
  client: pg.PoolClient,
  schema: string,
  part: PlannedCreate,
  lockTimeoutMs: number,
): Promise<Operation> {
  await client.query("BEGIN");
  try {
    await client.query(LOCK_PARTITIONS, [partitionsLockKey(schema)]);
    const overlap = (await listPartitions(client)).some(
      (p) => p.range_from && p.range_to && p.range_from < part.to && p.range_to > part.from,
    );
    if (overlap) {
      await client.query("ROLLBACK");
      return { kind: "create", partition: part.name, result: "skipped", detail: "already covered" };
    }
    await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
    await client.query(createPartitionTable(schema, part.name));
    await client.query(addRangeCheck(schema, part.name, part.from, part.to));
    await client.query(createPartitionUniqueIndex(schema, part.name));
    await client.query(partitionReplicaIdentity(schema, part.name));
    await client.query(attachPartition(schema, part.name, part.from, part.to));
    // The CHECK only served to skip ATTACH's validation scan; the bound now enforces it.
    await client.query(dropRangeCheck(schema, part.name));
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
  const { rows } = await client.query<{ pending: boolean }>(IS_DETACH_PENDING, [name]);
  return rows[0] ? rows[0].pending : null;
}

/**
 * DETACH … CONCURRENTLY, outside any transaction, each attempt bounded by lock_timeout. An attempt
 * interrupted after its first transaction leaves the partition detach-pending: the next attempt
 * (or the next run) completes it with FINALIZE.
 */
async function detach(
  client: pg.PoolClient,
  schema: string,
  name: string,
  lockTimeoutMs: number,
  attempts: number,
  ops: Operation[],
) {
  await client.query(`SET lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
  try {
    let kind: OperationKind = "detach";
    await retryDdl(
      attempts,
      async (attempt) => {
        const pending = await isDetachPending(client, name);
        if (pending === null) return; // already detached
        kind = pending ? "finalize" : "detach";
        const citus = !pending && (await isEffectsDistributed(client, schema));
        await client.query(detachPartition(schema, name, pending ? "finalize" : citus ? "plain" : "concurrently"));
        ops.push({ kind, partition: name, result: "ok", ...(attempt > 1 ? { detail: `attempt ${attempt}` } : {}) });
      },
      (_error, detail) => ops.push({ kind, partition: name, result: "failed", detail }),
    );
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
  schema: string,
  planned: PlannedIndex,
  lockTimeoutMs: number,
  attempts: number,
  ops: Operation[],
) {
  const failed = (detail: string) => ops.push({ kind: "index", partition: planned.partition, result: "failed", detail });
  const dropped = new Set<string>();
  await client.query(`SET lock_timeout = ${Math.max(1, Math.floor(lockTimeoutMs))}`);
  try {
    const built = await retryDdl(
      attempts,
      async (attempt) => {
        const before = (await tenantIndexes(client)).get(planned.partition);
        if (before && before.valid.length > 0) return { skipped: before.valid[0] as string };
        for (const invalid of before?.invalid ?? []) {
          await client.query(dropIndexConcurrently(schema, invalid));
          dropped.add(invalid);
        }
        const started = Date.now();
        await client.query(createTenantIndex(schema, planned.partition, planned.index));
        return { attempt, started };
      },
      (_error, detail) => failed(detail),
    );
    if ("skipped" in built) {
      ops.push({ kind: "index", partition: planned.partition, result: "skipped", detail: `has ${built.skipped}` });
      return;
    }
    const after = (await tenantIndexes(client)).get(planned.partition);
    if (!after || after.valid.length === 0) {
      // IF NOT EXISTS met another relation of that name, not of the Keys index's shape.
      failed(`${planned.index} exists but is not a valid Keys index: rename or drop it`);
      throw new Error(`${planned.index} on ${planned.partition} is not a valid Keys index after CREATE INDEX CONCURRENTLY`);
    }
    const notes = [`${after.valid[0]} in ${Date.now() - built.started} ms`];
    if (dropped.size > 0) notes.push(`rebuilt: dropped the INVALID ${[...dropped].join(", ")} of an interrupted build`);
    if (built.attempt > 1) notes.push(`attempt ${built.attempt}`);
    ops.push({ kind: "index", partition: planned.partition, result: "ok", detail: notes.join("; ") });
  } finally {
    await client.query("RESET lock_timeout").catch(() => {});
  }
}

/** Drops an expired partition: mark it ours, detach, look again for live claims (re-attach), drop. */
async function expire(
  client: pg.PoolClient,
  schema: string,
  p: PartitionState,
  now: Date,
  opts: Required<Pick<MaintainOptions, "lockTimeoutMs" | "attempts">>,
  runId: string,
  ops: Operation[],
) {
  if (p.action === "drop") {
    await client.query(commentOnTable(schema, p.name, `${DETACH_COMMENT_PREFIX} run ${runId}`));
  }
  await detach(client, schema, p.name, opts.lockTimeoutMs, opts.attempts, ops);
  const { rows } = await client.query<{ comment: string | null }>(TABLE_COMMENT, [p.name]);
  if (!rows[0]?.comment?.startsWith(DETACH_COMMENT_PREFIX)) {
    // Somebody else's detach (not marked by us): finished, but the table is theirs to drop.
    return;
  }
  // No check-then-act: a takeover could have revived a claim between the plan and the detach.
  // Now that no claim can reach the table any more, look again; if one is alive, put it back.
  const live = p.from && p.to ? ((await client.query<{ n: number }>(countLiveClaimsSql(p.name), [now])).rows[0]?.n ?? 0) : 0;
  if (live > 0 && p.from && p.to) {
    await client.query(commentOnTable(schema, p.name, null));
    await client.query(attachPartition(schema, p.name, p.from, p.to));
    ops.push({ kind: "reattach", partition: p.name, result: "ok", detail: `${live} live claim(s) appeared` });
    return;
  }
  await client.query(dropTable(schema, p.name));
  ops.push({ kind: "drop", partition: p.name, result: "ok" });
}

/**
 * One maintenance run. Never throws for a failed run: the result says so (and it is recorded). On
 * MySQL and MariaDB (a mysql2/promise pool) the run is maintenance-mysql.ts's.
 */
export async function maintain(
  pool: pg.Pool | MysqlPoolLike | MariadbPoolLike,
  options: MaintainOptions = {},
): Promise<MaintenanceRunResult> {
  const mysql = mysqlHandleOf(pool);
  if (mysql && isMysqlPool(mysql)) return maintainMysql(mysql, options);
  return maintainPostgres(pool as pg.Pool, options);
}

async function maintainPostgres(pool: pg.Pool, options: MaintainOptions): Promise<MaintenanceRunResult> {
  const now = options.now ?? new Date();
  const logger = options.logger ?? defaultLogger("onceboard-maintenance");
  const metrics: MaintenanceMetrics | null = options.registry ? maintenanceMetrics(options.registry) : null;
  const runner = options.runner ?? `${os.hostname()}:${process.pid}`;
  const trigger = options.trigger ?? "manual";
  const lockTimeoutMs = options.lockTimeoutMs ?? 2000;
  const indexLockTimeoutMs = options.indexLockTimeoutMs ?? 60_000;
  const attempts = options.attempts ?? 5;

  const schema = schemaNameOf(options.schema);
  let broken = false;
  const onError = () => {
    broken = true;
  };
  let client: pg.PoolClient;
  try {
    client = queryingIn(await connectListening(pool, onError), schema);
  } catch (error) {
    // The database is not there: a failed run (the schedule tries again), never a rejection.
    const message = error instanceof Error ? error.message : String(error);
    metrics?.runs.inc({ result: "failed" });
    logger.warn({ err: message }, "maintenance run could not connect");
    return { result: "failed", runId: null, operations: [], plan: null, error: message };
  }
  let locked = false;
  try {
    locked =
      (await client.query<{ locked: boolean }>(TRY_MAINTENANCE_LOCK, [maintenanceLockKey(schema)])).rows[0]?.locked === true;
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
      for (const part of plan.create) ops.push(await createPartition(client, schema, part, lockTimeoutMs));
      for (const p of plan.partitions) {
        if (p.action === "keep") continue;
        try {
          await expire(client, schema, p, now, { lockTimeoutMs, attempts }, runId, ops);
        } catch (error) {
          // One stuck partition must not stop the others; the run is reported failed.
          failure ??= error;
        }
      }
      for (const orphan of plan.orphans) {
        await client.query(dropTable(schema, orphan, true));
        ops.push({ kind: "drop", partition: orphan, result: "ok", detail: "detached by an earlier run" });
      }
      // The timeline of a range lives as long as its effects partition, and is premade beside it.
      try {
        await syncTimelinePartitions(client, schema, now, lockTimeoutMs, ops);
      } catch (error) {
        failure ??= error;
      }
      // Violation rows live as long as the effects they are about.
      const pruned = await pruneUncaughtViolations(client, plan.dropBefore);
      if (pruned > 0) ops.push({ kind: "prune", partition: "uncaught_violation_keys", result: "ok", detail: `${pruned} row(s)` });
      // Last: a build can take a while on a big partition, and must never delay a premake.
      for (const planned of plan.index) {
        try {
          await indexClosedPartition(client, schema, planned, indexLockTimeoutMs, attempts, ops);
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
    await recordMaintenanceRun(metrics, { now, operations: ops, failed: Boolean(failure) }, () =>
      planMaintenance(client, { now, schema }),
    );
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
      await client.query(RELEASE_MAINTENANCE_LOCK, [maintenanceLockKey(schema)]).catch(() => {
        broken = true;
      });
    client.off("error", onError);
    client.release(broken ? true : undefined);
  }
}
