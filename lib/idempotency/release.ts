import { detectCitus } from "./citus";
import { assertInTransaction, type EffectsDb, inNewTransaction, isPgPool, type Sql, sqlFor, type TransactionHandle } from "./db";
import { mapDbError } from "./db-errors";
import { EffectsError, InvalidEffectInputError } from "./errors";
import { fromMysqlTime, isMysql, isMysqlPool, type MysqlHandle, mysqlHandleOf } from "./mysql";
import { LOCK_EFFECT, LOOK_EFFECT, RELEASE_EFFECT, RELEASE_TENANT } from "./release-sql";
import { DEFAULT_SCHEMA, schemaNameOf } from "./schema";

/** Why a release was refused. */
export type ReleaseRefusal = "not_found" | "lease_alive" | "completed" | "at_most_once" | "not_in_progress" | "fenced";

/** The effect a refused release found (null when there is none). */
export interface UnreleasedEffect {
  status: string;
  policy: string;
  leaseUntil: Date | null;
  owner: string | null;
  attempt: number;
}

export type ReleaseResult =
  | { released: true; attempt: number; repeated?: boolean }
  | { released: false; reason: ReleaseRefusal; effect: UnreleasedEffect | null; repeated?: boolean };

export interface ReleaseInput {
  tenant: string;
  key: string;
  /** Who released it, recorded in the effect's error. */
  releasedBy: string;
  /** Release even while the lease is alive (a worker may still be running it). Default false. */
  force?: boolean;
  /** The library's schema. Default onceboard. */
  schema?: string;
  /**
   * MySQL and MariaDB, on a pool: names this release (at most 100 characters), so that running it
   * again releases nothing and answers the outcome recorded the first time (`repeated: true`), and
   * so that settleRelease() can learn or fence its outcome. For a caller whose own record of the
   * release (an audit log) is on another server: record "requested" there, release, record the
   * outcome. Not on PostgreSQL, where the release commits in the caller's own transaction instead.
   */
  requestId?: string;
}

/**
 * Releases a stuck claim so the next delivery takes it over at once, as after a failed attempt:
 * under the claim's own advisory lock, only an in-progress claim, never an at-most-once step (its
 * worker may have sent before it died: the next delivery marks it abandoned instead), and only
 * once its lease has expired unless `force`. Runs in the caller's open transaction when given one
 * (a pg client after BEGIN, Prisma's transaction client, a mysql2 or mariadb connection after
 * beginTransaction()), so the caller's own writes (an audit row) commit with it or not at all; on a
 * pg.Pool, a PrismaClient, a mysql2 or a mariadb pool, in a transaction of its own. On MySQL and MariaDB the
 * whole release is one procedure (onceboard_release), under the row's lock instead of an advisory lock.
 */
export async function releaseClaim(db: EffectsDb | TransactionHandle, input: ReleaseInput): Promise<ReleaseResult> {
  // A mariadb pool or connection behind mysql2's shape, as everywhere on MySQL.
  db = (mysqlHandleOf(db) ?? db) as EffectsDb | TransactionHandle;
  if (input === null || typeof input !== "object")
    throw new InvalidEffectInputError("input must be an object", { field: "input" });
  // Any text: a key no claim could have made is simply not found (the console answers it 404).
  const { tenant, key } = input;
  if (typeof tenant !== "string") throw new InvalidEffectInputError("tenant must be a string", { field: "tenant" });
  if (typeof key !== "string") throw new InvalidEffectInputError("key must be a string", { field: "key" });
  if (typeof input.releasedBy !== "string" || input.releasedBy.length === 0) {
    throw new InvalidEffectInputError("releasedBy must be a non-empty string (who released it)", { field: "releasedBy" });
  }
  if (input.force !== undefined && typeof input.force !== "boolean") {
    throw new InvalidEffectInputError("force must be a boolean", { field: "force" });
  }
  const schema = input.schema === undefined ? DEFAULT_SCHEMA : schemaNameOf(input.schema);
  if (input.requestId !== undefined) {
    const requestId = checkRequestId(input.requestId);
    if (!isMysql(db) || !isMysqlPool(db))
      throw new InvalidEffectInputError(
        "requestId is for a MySQL or MariaDB pool (the release runs in a transaction of its own there); on PostgreSQL release in your own transaction instead",
        { field: "requestId" },
      );
    try {
      return await releaseRequestMysql(db, schema, requestId, tenant, key, input.releasedBy, input.force ?? false);
    } catch (error) {
      throw error instanceof EffectsError ? error : mapDbError(error);
    }
  }
  const release = (sql: Sql) => releaseIn(sql, schema, tenant, key, input.releasedBy, input.force ?? false);
  try {
    if (isMysql(db)) {
      if (!isMysqlPool(db)) await assertInTransaction(db);
      return await releaseMysql(db, schema, tenant, key, input.releasedBy, input.force ?? false);
    }
    if (isPgPool(db) || typeof (db as { $transaction?: unknown }).$transaction === "function") {
      return await inNewTransaction(db as EffectsDb, (sql) => release(sql), { schema });
    }
    await assertInTransaction(db);
    return await release(sqlFor(db as TransactionHandle, true, schema));
  } catch (error) {
    throw error instanceof EffectsError ? error : mapDbError(error);
  }
}

type LookedRow = {
  status: string;
  policy: string;
  lease_until: Date | null;
  owner: string | null;
  attempt: number;
};

async function releaseIn(
  sql: Sql,
  schema: string,
  tenant: string,
  key: string,
  releasedBy: string,
  force: boolean,
): Promise<ReleaseResult> {
  // On Citus the lock must be taken on the tenant's worker, where claims take it: the whole release
  // is one function delegated there (detectCitus refuses, CitusSetupError, when it is not distributed).
  if (await detectCitus(sql, schema)) {
    const { rows } = await sql.run<LookedRow & { released: boolean }>(RELEASE_TENANT, [tenant, key, releasedBy, force]);
    const row = rows[0];
    if (row?.released) return { released: true, attempt: Number(row.attempt) };
    return refusal(row);
  }
  await sql.run(LOCK_EFFECT, [tenant, key]);
  const released = await sql.run<{ attempt: number }>(RELEASE_EFFECT, [tenant, key, releasedBy, force]);
  const row = released.rows[0];
  if (row) return { released: true, attempt: Number(row.attempt) };
  const looked = await sql.run<LookedRow>(LOOK_EFFECT, [tenant, key]);
  return refusal(looked.rows[0]);
}

// onceboard_release(tenant, key, released by, force, own transaction): one row, or none when there is no such effect.
const RELEASE_MYSQL = {
  name: "onceboard_release",
  returns: "rows" as const,
  text: "CALL onceboard.onceboard_release(?, ?, ?, ?, ?)",
};

async function releaseMysql(
  db: MysqlHandle,
  schema: string,
  tenant: string,
  key: string,
  releasedBy: string,
  force: boolean,
): Promise<ReleaseResult> {
  const sql = sqlFor(db, !isMysqlPool(db), schema);
  const { rows } = await sql.run<{
    released: number;
    status: string;
    policy: string;
    lease_until: string | null;
    owner: string | null;
    attempt: number;
  }>(RELEASE_MYSQL, [tenant, key, releasedBy, force, isMysqlPool(db)]);
  const row = rows[0];
  if (row && Number(row.released) === 1) return { released: true, attempt: Number(row.attempt) };
  return refusal(row && { ...row, lease_until: fromMysqlTime(row.lease_until) });
}

function checkRequestId(requestId: unknown): string {
  if (typeof requestId !== "string" || requestId.length === 0 || requestId.length > 100)
    throw new InvalidEffectInputError("requestId must be a string of 1 to 100 characters", { field: "requestId" });
  return requestId;
}

// onceboard_release_request(request, tenant, key, released by, force) (migrations-mysql/0003): one row.
const RELEASE_REQUEST_MYSQL = {
  name: "onceboard_release_request",
  returns: "rows" as const,
  text: "CALL onceboard.onceboard_release_request(?, ?, ?, ?, ?)",
};

type RequestRow = {
  repeated: number;
  outcome: string;
  released_attempt: number | null;
  status: string | null;
  policy: string | null;
  lease_until: string | null;
  owner: string | null;
  attempt: number | null;
};

async function releaseRequestMysql(
  db: MysqlHandle,
  schema: string,
  requestId: string,
  tenant: string,
  key: string,
  releasedBy: string,
  force: boolean,
): Promise<ReleaseResult> {
  const sql = sqlFor(db, false, schema);
  const { rows } = await sql.run<RequestRow>(RELEASE_REQUEST_MYSQL, [requestId, tenant, key, releasedBy, force]);
  const row = rows[0];
  if (!row) throw new Error("onceboard_release_request answered no row");
  return recordedResult(row.outcome, row.released_attempt, Number(row.repeated) === 1, row);
}

/** The result a recorded outcome stands for; `found` is the effect as it stands now. */
function recordedResult(
  outcome: string,
  releasedAttempt: number | null,
  repeated: boolean,
  found: Omit<RequestRow, "repeated" | "outcome" | "released_attempt">,
): ReleaseResult {
  if (outcome === "released") return { released: true, attempt: Number(releasedAttempt), repeated };
  const effect: UnreleasedEffect | null =
    found.status === null
      ? null
      : {
          status: found.status,
          policy: found.policy ?? "",
          leaseUntil: fromMysqlTime(found.lease_until),
          owner: found.owner,
          attempt: Number(found.attempt),
        };
  return { released: false, reason: outcome as ReleaseRefusal, effect, repeated };
}

export interface SettleReleaseInput {
  requestId: string;
  tenant: string;
  key: string;
  /** Who settled it, recorded on the request's row when the settle fences it. */
  settledBy: string;
  schema?: string;
}

/** What became of a named release: released (the attempt), refused (why), or fenced (it never ran and never will). */
export type SettledRelease =
  | { outcome: "released"; attempt: number }
  | { outcome: Exclude<ReleaseRefusal, "fenced">; attempt: null }
  | { outcome: "fenced"; attempt: null };

// onceboard_settle_release(request, tenant, key, settled by) (migrations-mysql/0003): one row.
const SETTLE_MYSQL = {
  name: "onceboard_settle_release",
  returns: "rows" as const,
  text: "CALL onceboard.onceboard_settle_release(?, ?, ?, ?)",
};

/**
 * Decides a named release (releaseClaim's requestId) whose outcome its caller never heard — the
 * connection was lost mid-call: answers the outcome it committed with, waits for one still running,
 * and fences one that rolled back or has not arrived, so that it never runs later. The database's
 * key decides; nothing is read first. MySQL and MariaDB pools only.
 */
export async function settleRelease(db: EffectsDb, input: SettleReleaseInput): Promise<SettledRelease> {
  db = (mysqlHandleOf(db) ?? db) as EffectsDb;
  if (input === null || typeof input !== "object")
    throw new InvalidEffectInputError("input must be an object", { field: "input" });
  const requestId = checkRequestId(input.requestId);
  for (const field of ["tenant", "key", "settledBy"] as const) {
    if (typeof input[field] !== "string") throw new InvalidEffectInputError(`${field} must be a string`, { field });
  }
  if (!isMysql(db) || !isMysqlPool(db))
    throw new InvalidEffectInputError("settleRelease is for a MySQL or MariaDB pool", { field: "db" });
  const schema = input.schema === undefined ? DEFAULT_SCHEMA : schemaNameOf(input.schema);
  try {
    const sql = sqlFor(db, false, schema);
    const { rows } = await sql.run<{ outcome: string; attempt: number | null; tenant_id: string; key: string }>(SETTLE_MYSQL, [
      requestId,
      input.tenant,
      input.key,
      input.settledBy,
    ]);
    const row = rows[0];
    if (!row) throw new Error("onceboard_settle_release answered no row");
    if (row.tenant_id !== input.tenant || row.key !== input.key)
      throw new InvalidEffectInputError("this release request id names another tenant or key", { field: "requestId" });
    return row.outcome === "released"
      ? { outcome: "released", attempt: Number(row.attempt) }
      : ({ outcome: row.outcome, attempt: null } as SettledRelease);
  } catch (error) {
    throw error instanceof EffectsError ? error : mapDbError(error);
  }
}

/** Why a release found nothing to release, from the effect it found (undefined: none). */
function refusal(found: LookedRow | undefined): ReleaseResult {
  if (!found) return { released: false, reason: "not_found", effect: null };
  const effect: UnreleasedEffect = {
    status: found.status,
    policy: found.policy,
    leaseUntil: found.lease_until,
    owner: found.owner,
    attempt: Number(found.attempt),
  };
  const reason: ReleaseRefusal =
    found.status === "completed"
      ? "completed"
      : found.status !== "in_progress"
        ? "not_in_progress"
        : found.policy === "at_most_once"
          ? "at_most_once"
          : "lease_alive";
  return { released: false, reason, effect };
}
