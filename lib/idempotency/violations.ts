import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { EffectsCore } from "./core";
import { sqlFor } from "./db";
import { mysqlDuplicateKeyName } from "./mysql-errors";
import { sqlStateOf, withRetry } from "./retryable";

function findField(error: unknown, field: string, depth = 0): unknown {
  if (!error || typeof error !== "object" || depth > 4) return undefined;
  const e = error as Record<string, unknown>;
  if (e[field] !== undefined && e[field] !== null) return e[field];
  for (const next of ["cause", "meta", "driverAdapterError"]) {
    const found = findField(e[next], field, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * If `error` is a unique violation (SQLSTATE 23505 from pg, postgres.js, or wrapped as Drizzle's
 * DrizzleQueryError's cause; or Prisma's P2002; MySQL's duplicate key 1062 from mysql2), the name of
 * the violated constraint ("unknown" when the driver does not say); otherwise null.
 */
export function uniqueViolationConstraint(error: unknown): string | null {
  const mysqlKey = mysqlDuplicateKeyName(error);
  if (mysqlKey !== null) return mysqlKey;
  const prismaCode = (error as { code?: unknown } | null)?.code;
  if (sqlStateOf(error) !== "23505" && prismaCode !== "P2002") return null;
  // pg and Prisma's adapter say `constraint`; postgres.js says `constraint_name`.
  const constraint = findField(error, "constraint") ?? findField(error, "constraint_name");
  if (typeof constraint === "string") return constraint;
  if (constraint && typeof constraint === "object") {
    const c = constraint as { index?: unknown; fields?: unknown };
    if (typeof c.index === "string") return c.index;
    if (Array.isArray(c.fields)) return c.fields.join(",");
  }
  const target = findField(error, "target");
  if (typeof target === "string") return target;
  if (Array.isArray(target)) return target.join(",");
  return "unknown";
}

/** What one uncaught unique violation is recorded with. */
export interface UncaughtViolation {
  tenant: string;
  key: string;
  jobType: string;
  constraint: string;
  messageId?: string | null;
  /** The handler's error: its message is stored (the console redacts it before showing it). */
  error: unknown;
}

/** The longest error message stored with a violation (a driver's message is a line or two). */
const MAX_MESSAGE_CHARS = 2000;

/**
 * How long a step waits for its violation's row before it rethrows anyway. A transactional step
 * holds one of the pool's connections while the row needs another: with every connection held by
 * such steps the insert would wait for a connection none of them releases until it returns. The
 * insert stays queued and is written once a connection frees up.
 */
const RECORD_WAIT_MS = 5000;

function messageOf(error: unknown): string | null {
  const text = error instanceof Error ? error.message : error === undefined || error === null ? null : String(error);
  return text === null ? null : text.slice(0, MAX_MESSAGE_CHARS);
}

/**
 * Records an uncaught unique violation now: the metric, the rollups' counts (charts), and its own
 * row in uncaught_violation_keys, written at once on the pool (outside the step's transaction,
 * which the violation has aborted; retried through transient errors) and awaited, so a worker killed right after the step failed
 * has lost nothing. Never throws: the caller rethrows the handler's violation, and a failed insert
 * must not replace it; a failure is logged and counted (idem_violation_record_failures_total).
 * The once/job path and the batch lifecycle both call this.
 */
export async function recordUncaughtViolation(core: EffectsCore, violation: UncaughtViolation): Promise<void> {
  const { tenant, key, jobType, constraint } = violation;
  const messageId = violation.messageId ?? null;
  core.metrics.uncaughtViolations.inc({ job_type: jobType, constraint });
  core.rollups?.add(jobType, { uncaughtViolations: 1 });
  core.rollups?.addViolation(jobType, constraint);
  core.rollups?.addTenantViolation(tenant, jobType, constraint, key);
  const fields = { tenant, key, jobType, constraint, messageId };
  const sql = sqlFor(core.opts.db, false, core.opts.schema);
  const record = {
    id: randomUUID(),
    tenant,
    jobType,
    constraint,
    key,
    messageId,
    message: messageOf(violation.error),
    workerId: core.opts.workerId,
    marked: core.opts.marked,
  };
  // Retried through a connection cut or a restart: the row is the alarm. Its id makes a retry of
  // an insert whose reply was lost a no-op.
  const insert = withRetry(() => core.store.insertViolation(sql, record)).then(
    () => true,
    (error: unknown) => {
      core.metrics.violationRecordFailures.inc();
      core.logger.error({ ...fields, err: error }, "could not record an uncaught violation's key");
      return false;
    },
  );
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<"waiting">((resolve) => {
    timer = setTimeout(() => resolve("waiting"), RECORD_WAIT_MS);
    timer.unref?.();
  });
  const first = await Promise.race([insert, waited]);
  clearTimeout(timer);
  if (first === "waiting") {
    core.logger.warn({ ...fields, waitedMs: RECORD_WAIT_MS }, "an uncaught violation's key is still being recorded");
  }
}

/** Deletes violation rows older than `before` (maintain(), with the effects' horizon); returns how many. */
export async function pruneUncaughtViolations(client: Pick<pg.PoolClient, "query">, before: Date): Promise<number> {
  const result = await client.query("DELETE FROM onceboard.uncaught_violation_keys WHERE occurred_at < $1", [before]);
  return result.rowCount ?? 0;
}
