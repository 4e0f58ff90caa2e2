import { randomUUID } from "node:crypto";
import os from "node:os";
import type { Registry } from "prom-client";
import { type EffectsDb, isPgPool, isPrisma } from "./db";
import { type Duration, toMs } from "./duration";
import { InvalidEffectsOptionsError, RetentionConfigError } from "./errors";
import { defaultLogger, type Logger } from "./logger";
import {
  isMariadbPool,
  isMysqlCallbackPool,
  isMysqlPool,
  isPrismaOnMysql,
  mysqlHandleOf,
  PRISMA_ON_MYSQL_REFUSED,
} from "./mysql";
import { schemaNameOf } from "./schema";

export interface EffectsOptions {
  /**
   * A pg.Pool, a PrismaClient (claims then go through $queryRawUnsafe), or a mysql2/promise pool
   * (MySQL 8, MariaDB 10.6+: the MySQL store, docs/worker-library.md "On MySQL and MariaDB").
   */
  db: EffectsDb;
  /** How long a claim is owned before another delivery may take it over. Default "30s". */
  lease?: Duration;
  /** How long a duplicate waits for an in-flight effect before reporting in-flight. Default "10s". */
  wait?: Duration;
  /** How long effect records are kept (the partition manager's setting). Default "7d". */
  retention?: Duration;
  /** The longest a message can be redelivered after it was published, dead-letter dwell included. Default "3d". */
  maxRetryWindow?: Duration;
  /** Largest stored outcome, as JSON bytes. Default 64 KiB. */
  maxOutcomeBytes?: number;
  /** prom-client registry; default one anchored on globalThis. */
  registry?: Registry;
  /** A pino logger (or any with its methods); default JSON lines on stderr at LOG_LEVEL (info). */
  logger?: Logger;
  /**
   * Writes `marked = true` on every row this instance writes (effects, the rollups, the delivery
   * timeline, uncaught violations), so that one workload's rows (a demo, a load test, a canary) can
   * be told apart and deleted together: `DELETE FROM onceboard.effects WHERE marked`, and so on.
   * Rollups of marked and unmarked instances are kept apart. Default false.
   */
  marked?: boolean;
  /**
   * How often per-minute rollups and per-row duplicate bookkeeping are flushed; 0 disables the
   * timer (flush() and close() still flush). Default "10s".
   */
  flushInterval?: Duration;
  /** Write per-minute rollups at all. Default true. */
  rollups?: boolean;
  /**
   * Coalesce concurrent claims, completions and failures outside transactions into one set-wise
   * statement per round trip (coalescer.ts). Default true; false sends each on its own.
   */
  coalesce?: boolean;
  /**
   * Record every delivery of a key in delivery_timeline (the key's timeline on the console),
   * written in batches like the duplicate bookkeeping. Default true; false writes nothing there.
   */
  timeline?: boolean;
  /** Names this process in effects.owner. Default host:pid:random. */
  workerId?: string;
  /**
   * This worker's name across restarts: a supervisor's slot, a pod's or a service's name. Each start
   * of its process is recorded under it (worker_starts, when `register` is on) and its /metrics
   * carries it (idem_worker_info), so the console counts the worker's restarts from these records,
   * whether or not anyone was looking. Default the host's name: give each its own when one host
   * runs several workers.
   */
  workerName?: string;
  /** The PostgreSQL schema `migrate()` installed the library into. Default "onceboard". */
  schema?: string;
  // --- Retention ---
  /**
   * Register this worker's maxRetryWindow in worker_registrations (heartbeat) and read the
   * retention from the database, which then replaces the `retention` option; `ready()` rejects
   * when the window exceeds it. Default true; false keeps the local option (tests, one-off tools).
   */
  register?: boolean;
  /** Run partition maintenance in this process on a schedule (needs a pg.Pool or a mysql2 pool). Default off; `true` = every 5 min. */
  maintain?: boolean | { interval?: Duration };
}

export interface ResolvedOptions {
  db: EffectsDb;
  leaseMs: number;
  waitMs: number;
  retentionMs: number;
  maxRetryWindowMs: number;
  maxOutcomeBytes: number;
  registry: Registry | undefined;
  logger: Logger;
  marked: boolean;
  flushIntervalMs: number;
  rollups: boolean;
  coalesce: boolean;
  timeline: boolean;
  workerId: string;
  workerName: string;
  schema: string;
  register: boolean;
  /** null: this process does not run maintenance. */
  maintainIntervalMs: number | null;
}

type Check = (value: unknown) => string | null;
const isDuration: Check = (v) =>
  typeof v === "number" || typeof v === "string" ? null : "must be a number of ms or a string like 30s";
const isBoolean: Check = (v) => (typeof v === "boolean" ? null : "must be true or false");
const isOutcomeBytes: Check = (v) =>
  Number.isInteger(v) && (v as number) >= 16 && (v as number) <= 100 * 1024 * 1024
    ? null
    : "must be an integer from 16 to 104857600";
const isWorkerId: Check = (v) =>
  typeof v === "string" && v.length >= 1 && v.length <= 200 ? null : "must be a string of 1 to 200 characters";
const isMaintain: Check = (v) =>
  typeof v === "boolean" ||
  (typeof v === "object" && v !== null && isDuration((v as { interval?: unknown }).interval ?? 0) === null)
    ? null
    : "must be true, false or { interval }";

/** The shape of each optional field (values are range-checked by their own validators below). */
const FIELD_CHECKS: Record<string, Check> = {
  lease: isDuration,
  wait: isDuration,
  retention: isDuration,
  maxRetryWindow: isDuration,
  maxOutcomeBytes: isOutcomeBytes,
  marked: isBoolean,
  flushInterval: isDuration,
  rollups: isBoolean,
  coalesce: isBoolean,
  timeline: isBoolean,
  workerId: isWorkerId,
  workerName: isWorkerId,
  register: isBoolean,
  maintain: isMaintain,
};

function shapeProblems(options: EffectsOptions): string[] {
  const problems: string[] = [];
  for (const [field, check] of Object.entries(FIELD_CHECKS)) {
    const value = (options as unknown as Record<string, unknown>)[field];
    if (value === undefined) continue;
    const problem = check(value);
    if (problem) problems.push(`${field} ${problem}`);
  }
  return problems;
}

/**
 * Lease bounds, the same for createEffects and every per-call `lease`. Below 100 ms a lease runs
 * out while an ordinary step is still running and a concurrent duplicate takes it over (a `0s`
 * lease did exactly that); above ~23 days it overflows the claim's int4 milliseconds.
 */
const MIN_LEASE_MS = 100;
const MAX_LEASE_MS = 2_000_000_000;
/** `wait` may be 0 (report in-flight at once), at most ~23 days (a JavaScript timer's range). */
const MAX_WAIT_MS = 2_000_000_000;
/** Retention below this refuses deliveries minutes old; the partition manager works in days anyway. */
const MIN_RETENTION_MS = 3_600_000;

/** Validates a lease (createEffects' or a call's): InvalidEffectsOptionsError naming `lease`. */
export function leaseMsOf(value: unknown): number {
  const ms = toMs(value as Duration, "lease");
  if (ms < MIN_LEASE_MS || ms > MAX_LEASE_MS) {
    throw new InvalidEffectsOptionsError(
      `lease must be between ${MIN_LEASE_MS} ms and ${MAX_LEASE_MS} ms (~23 days); got ${String(value)}`,
      { field: "lease" },
    );
  }
  return Math.round(ms);
}

/** Validates a wait (createEffects' or a call's): InvalidEffectsOptionsError naming `wait`. */
export function waitMsOf(value: unknown): number {
  const ms = toMs(value as Duration, "wait");
  if (ms > MAX_WAIT_MS) {
    throw new InvalidEffectsOptionsError(`wait must be at most ${MAX_WAIT_MS} ms (~23 days); got ${String(value)}`, {
      field: "wait",
    });
  }
  return Math.round(ms);
}

export function resolveOptions(options: EffectsOptions): ResolvedOptions {
  if (isMysqlCallbackPool(options?.db)) {
    throw new InvalidEffectsOptionsError(
      "createEffects needs mysql2's promise pool: pass pool.promise(), or create it with mysql2/promise",
      { field: "db" },
    );
  }
  if (isPrismaOnMysql(options?.db)) throw new InvalidEffectsOptionsError(PRISMA_ON_MYSQL_REFUSED, { field: "db" });
  if (!isPgPool(options?.db) && !isPrisma(options?.db) && !isMysqlPool(options?.db) && !isMariadbPool(options?.db)) {
    throw new InvalidEffectsOptionsError(
      "createEffects needs `db`: a pg.Pool, a PrismaClient, a mysql2/promise pool or a mariadb pool",
    );
  }
  const problems = shapeProblems(options);
  if (problems.length > 0) throw new InvalidEffectsOptionsError(`invalid createEffects options: ${problems.join("; ")}`);
  const leaseMs = leaseMsOf(options.lease ?? "30s");
  const waitMs = waitMsOf(options.wait ?? "10s");
  const retentionMs = toMs(options.retention ?? "7d", "retention");
  const maxRetryWindowMs = toMs(options.maxRetryWindow ?? "3d", "maxRetryWindow");
  if (retentionMs < MIN_RETENTION_MS) {
    throw new RetentionConfigError(
      `retention (${String(options.retention)}) is under one hour: a message redelivered later than that would be refused as older than the retention (or, if its record was pruned, run again). Keep effects at least as long as the longest retry window.`,
      { field: "retention" },
    );
  }
  // A record pruned before the last possible redelivery makes that redelivery look new: it runs again.
  if (retentionMs < maxRetryWindowMs) {
    throw new RetentionConfigError(
      `retention (${String(options.retention ?? "7d")}) is shorter than maxRetryWindow (${String(options.maxRetryWindow ?? "3d")}): a message redelivered after its effect record was pruned would run again. Keep effects at least as long as the longest retry window, dead-letter dwell included.`,
    );
  }
  return {
    // A mariadb pool behind mysql2's shape: the store and everything after it see one kind of handle.
    db: isMariadbPool(options.db) ? (mysqlHandleOf(options.db) as EffectsDb) : options.db,
    leaseMs,
    waitMs,
    retentionMs,
    maxRetryWindowMs,
    maxOutcomeBytes: options.maxOutcomeBytes ?? 64 * 1024,
    registry: options.registry,
    logger: options.logger ?? defaultLogger("onceboard-effects"),
    marked: options.marked ?? false,
    flushIntervalMs: toMs(options.flushInterval ?? "10s", "flushInterval"),
    rollups: options.rollups ?? true,
    coalesce: options.coalesce ?? true,
    timeline: options.timeline ?? true,
    workerId: options.workerId ?? `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    workerName: options.workerName ?? os.hostname(),
    schema: schemaNameOf(options.schema),
    ...resolveRetentionOptions(options),
  };
}

function resolveRetentionOptions(options: EffectsOptions): Pick<ResolvedOptions, "register" | "maintainIntervalMs"> {
  const maintain = options.maintain ?? false;
  const maintainIntervalMs =
    maintain === false ? null : toMs((maintain === true ? undefined : maintain.interval) ?? "5m", "maintain.interval");
  if (maintainIntervalMs !== null && !isPgPool(options.db) && !isMysqlPool(options.db) && !isMariadbPool(options.db)) {
    throw new InvalidEffectsOptionsError(
      "maintain needs `db` to be a pg.Pool, a mysql2/promise pool or a mariadb pool (partition DDL runs outside a transaction)",
    );
  }
  return { register: options.register ?? true, maintainIntervalMs };
}
