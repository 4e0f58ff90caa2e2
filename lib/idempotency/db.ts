import type pg from "pg";
import { EffectsDatabaseError, InvalidEffectInputError, NotInTransactionError } from "./errors";
import { literalArguments } from "./literal-arguments";
import {
  affectedRowsOf,
  assertMysqlInTransaction,
  inNewMysqlTransaction,
  isMysqlEngine,
  isPrismaOnMysql,
  type MariadbConnectionLike,
  type MariadbPoolLike,
  type MysqlConnectionLike,
  type MysqlHandle,
  type MysqlPoolLike,
  mysqlHandleOf,
  rowsOf as mysqlRowsOf,
  nativeHandleOf,
  PRISMA_ON_MYSQL_REFUSED,
} from "./mysql";
import { DEFAULT_SCHEMA, inSchema, statementNameIn } from "./schema";

/**
 * The database handles the library accepts, and a small common interface over them.
 * A pg Pool (or, inside a transaction, a PoolClient/Client), a PrismaClient (or, inside a
 * transaction, the interactive-transaction client Prisma passes to $transaction's callback), or,
 * for MySQL 8 and MariaDB, a mysql2/promise Pool or a `mariadb` driver pool (or, inside a transaction,
 * one of their connections). Typed structurally so the library does not depend on the app's
 * generated Prisma client or on either MySQL driver.
 */
export interface PrismaLike {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(query: string, ...values: unknown[]): Promise<number>;
}
export interface PrismaClientLike extends PrismaLike {
  $transaction<R>(fn: (tx: PrismaLike) => Promise<R>, options?: { isolationLevel?: string; timeout?: number }): Promise<R>;
}
export type PgQueryable = Pick<pg.PoolClient, "query">;
export type EffectsDb = pg.Pool | PrismaClientLike | MysqlPoolLike | MariadbPoolLike;

/**
 * The transaction object Drizzle's `db.transaction(async (tx) => …)` passes (PgTransaction, over
 * node-postgres or postgres.js). Recognised by Drizzle's own entity kind, not by this shape.
 */
export interface DrizzleTransactionLike {
  execute(query: never): PromiseLike<unknown>;
  rollback(): never;
}

/** A compiled query in Kysely's shape (CompiledQuery): what executeQuery accepts. */
interface KyselyCompiledQuery {
  readonly sql: string;
  readonly parameters: readonly unknown[];
  readonly query: { readonly kind: "RawNode"; readonly sqlFragments: readonly string[]; readonly parameters: readonly never[] };
  readonly queryId: { readonly queryId: string };
}

/** Kysely's Transaction (from `db.transaction().execute(async (trx) => …)` or startTransaction()). */
export interface KyselyTransactionLike {
  readonly isTransaction: boolean;
  withoutPlugins(): { executeQuery(query: KyselyCompiledQuery): Promise<{ rows: unknown[]; numAffectedRows?: bigint }> };
}

/** postgres.js's TransactionSql, the `sql` that `sql.begin(async (sql) => …)` passes. */
export interface PostgresJsTransactionLike {
  unsafe(query: string, parameters?: never[]): PromiseLike<unknown>;
  savepoint: unknown;
}

/**
 * What a caller passes as the transaction a transactional claim joins: a pg client after BEGIN,
 * Prisma's interactive-transaction client, or the transaction object of Drizzle, Kysely or
 * postgres.js. The claim runs on that object, so it commits or rolls back with the caller's writes.
 */
export type TransactionHandle =
  | PgQueryable
  | PrismaLike
  | DrizzleTransactionLike
  | KyselyTransactionLike
  | PostgresJsTransactionLike
  | MysqlConnectionLike
  | MariadbConnectionLike;

export interface Statement {
  /** A prepared statement's name: pg parses and plans it once per connection. */
  name: string;
  text: string;
  /** Whether the statement returns rows (SELECT / RETURNING) or only a count. */
  returns: "rows" | "count";
}

export interface SqlResult<R> {
  rows: R[];
  rowCount: number;
}

export interface Sql {
  run<R = Record<string, unknown>>(statement: Statement, values: unknown[]): Promise<SqlResult<R>>;
  /** True when statements run inside a transaction the library does not own: no statement retries. */
  readonly inTransaction: boolean;
  /** Set when the statements run in a transaction the library owns and reruns whole (step.ts). */
  readonly rerunnable?: RerunnableTransaction;
}

/**
 * One transactional step's transaction, which the library opens and reruns whole on a transient
 * failure. Its claims use one owner on every run, so a rerun after a COMMIT whose reply was lost
 * recognises the committed effect as its own. The bookkeeping of a run (metrics, rollups, the
 * timeline, duplicate counts) waits in `pendingRecords` until the run is known to be the last: a run that
 * is rolled back and rerun would otherwise count one delivery twice.
 */
export interface RerunnableTransaction {
  readonly owner: string;
  pendingRecords: (() => void)[];
}

/** Does `record` now, or, in a run of a rerunnable transaction, once that run is known to be the last. */
export function recordOnce(sql: Sql, record: () => void): void {
  if (sql.rerunnable) sql.rerunnable.pendingRecords.push(record);
  else record();
}

export function isPrisma(db: unknown): db is PrismaLike {
  return typeof (db as PrismaLike | undefined)?.$queryRawUnsafe === "function";
}

const DRIZZLE_ENTITY_KIND = Symbol.for("drizzle:entityKind");

/** Drizzle's entity kinds of `value`'s class and its ancestors (how Drizzle's own `is()` tells classes apart). */
function drizzleKinds(value: unknown): string[] {
  const kinds: string[] = [];
  if (!value || typeof value !== "object") return kinds;
  for (let proto = Object.getPrototypeOf(value); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    const kind = (proto.constructor as Record<symbol, unknown> | undefined)?.[DRIZZLE_ENTITY_KIND];
    if (typeof kind === "string") kinds.push(kind);
  }
  return kinds;
}

export function isDrizzle(db: unknown): db is DrizzleTransactionLike {
  return drizzleKinds(db).includes("PgDatabase");
}

export function isKysely(db: unknown): db is KyselyTransactionLike {
  const d = db as Partial<KyselyTransactionLike> | undefined;
  return typeof d?.withoutPlugins === "function" && typeof d?.isTransaction === "boolean";
}

/** postgres.js's `sql` is a function (a tagged template) with methods on it. */
export function isPostgresJs(db: unknown): db is PostgresJsTransactionLike {
  return typeof db === "function" && typeof (db as Partial<PostgresJsTransactionLike>).unsafe === "function";
}

export function isPgPool(db: unknown): db is pg.Pool {
  const d = db as pg.Pool | undefined;
  return typeof d?.connect === "function" && typeof d?.query === "function" && typeof d?.totalCount === "number";
}

/** The rows and count of a driver's result: pg's QueryResult, or postgres.js's row list (an array with `count`). */
function rowsOf<R>(result: unknown): SqlResult<R> {
  if (Array.isArray(result)) return { rows: result as R[], rowCount: (result as { count?: number }).count ?? result.length };
  const r = result as { rows: R[]; rowCount?: number | null };
  return { rows: r.rows, rowCount: r.rowCount ?? r.rows.length };
}

/**
 * Drizzle's `sql` tag, loaded on first use from the app's own drizzle-orm (an optional peer: only a
 * caller who passes a Drizzle transaction ever gets here, so it is installed).
 */
type DrizzleSqlTag = typeof import("drizzle-orm").sql;
let drizzleSql: Promise<DrizzleSqlTag> | undefined;

/**
 * One statement as a Drizzle SQL object. Every value goes in as sql.param: a bare array in Drizzle's
 * template would be spread into a `($1, $2)` list, and our statements pass arrays as one parameter.
 * Drizzle numbers the parameters itself, in order, so a `$n` used twice is sent twice.
 */
async function drizzleStatement(text: string, values: unknown[]) {
  drizzleSql ??= import("drizzle-orm").then((m) => m.sql);
  const sql = await drizzleSql;
  const strings: string[] = [];
  const params: unknown[] = [];
  let from = 0;
  for (const match of text.matchAll(/\$(\d+)/g)) {
    strings.push(text.slice(from, match.index));
    params.push(sql.param(values[Number(match[1]) - 1]));
    from = (match.index ?? 0) + match[0].length;
  }
  strings.push(text.slice(from));
  return sql(Object.assign(strings, { raw: strings }) as TemplateStringsArray, ...params);
}

/**
 * A statement for postgres.js, which serializes each parameter by the type the server describes
 * for it: a `$n::jsonb` parameter would be JSON.stringify'd again, and the outcome the library
 * already encoded as JSON text stored as one JSON string. Cast through text instead, as pg sends it.
 */
function postgresJsText(text: string): string {
  return text.replace(/(\$\d+)::(jsonb?)(\[\])?/g, "$1::text$3::$2$3");
}

/**
 * Runs the library's statements on a handle, in the library's schema (see schema.ts). On MySQL the
 * statements are the MySQL store's own (stores/mysql-sql.ts), sent as prepared statements.
 */
export function sqlFor(handle: EffectsDb | TransactionHandle, inTransaction: boolean, schema = DEFAULT_SCHEMA): Sql {
  const mysql = mysqlHandleOf(handle);
  if (mysql) return mysqlSql(mysql, inTransaction, schema);
  if (isDrizzle(handle)) {
    return {
      inTransaction,
      async run<R>(statement: Statement, values: unknown[]) {
        const query = await drizzleStatement(inSchema(statement.text, schema), values);
        return rowsOf<R>(await handle.execute(query as never));
      },
    };
  }
  if (isKysely(handle)) {
    // Without the app's plugins: a CamelCasePlugin would rename the columns the library reads.
    const kysely = handle.withoutPlugins();
    return {
      inTransaction,
      async run<R>(statement: Statement, values: unknown[]) {
        const text = inSchema(statement.text, schema);
        const result = await kysely.executeQuery({
          sql: text,
          parameters: values,
          query: { kind: "RawNode", sqlFragments: [text], parameters: [] },
          queryId: { queryId: statement.name },
        });
        return { rows: result.rows as R[], rowCount: Number(result.numAffectedRows ?? result.rows.length) };
      },
    };
  }
  if (isPostgresJs(handle)) {
    return {
      inTransaction,
      async run<R>(statement: Statement, values: unknown[]) {
        const text = postgresJsText(inSchema(statement.text, schema));
        return rowsOf<R>(await handle.unsafe(text, values as never[]));
      },
    };
  }
  if (isPrisma(handle)) {
    return {
      inTransaction,
      async run<R>(statement: Statement, values: unknown[]) {
        const text = inSchema(statement.text, schema);
        if (statement.returns === "rows") {
          const rows = await handle.$queryRawUnsafe<R[]>(text, ...values);
          return { rows, rowCount: rows.length };
        }
        const rowCount = await handle.$executeRawUnsafe(text, ...values);
        return { rows: [], rowCount };
      },
    };
  }
  const q = handle as PgQueryable;
  return {
    inTransaction,
    async run<R>(statement: Statement, values: unknown[]) {
      const result = await q.query({
        name: statementNameIn(statement.name, schema),
        text: inSchema(statement.text, schema),
        values,
      });
      return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
    },
  };
}

function mysqlSql(handle: MysqlHandle, inTransaction: boolean, schema: string): Sql {
  return {
    inTransaction,
    async run<R>(statement: Statement, values: unknown[]) {
      const result = await handle.execute(inSchema(statement.text, schema), values);
      const rows = mysqlRowsOf<R>(result);
      return { rows, rowCount: statement.returns === "rows" ? rows.length : affectedRowsOf(result) };
    },
  };
}

/**
 * Checks out a client with our 'error' listener already on it. pg-pool calls a connect callback
 * synchronously when it hands a released client to a waiter, while the socket data that released
 * it is still being parsed; a promise continuation (`await pool.connect()`) runs only after that
 * read is finished. When the server's FATAL (57P01, pg_terminate_backend) arrived in the same read
 * as the reply that freed the client, the client emitted 'error' before any listener existed: an
 * uncaught exception that killed the worker. The pool stops listening to a client's errors while
 * it is checked out, so attaching ours inside the callback leaves no instant without a listener.
 */
export function connectListening(pool: pg.Pool, onError: (error: Error) => void): Promise<pg.PoolClient> {
  return new Promise((resolve, reject) => {
    pool.connect((error, client) => {
      if (error || !client) {
        reject(error ?? new Error("pool.connect returned no client"));
        return;
      }
      client.on("error", onError);
      resolve(client);
    });
  });
}

const BEGIN_READ_COMMITTED = "BEGIN ISOLATION LEVEL READ COMMITTED";

/**
 * The named statements a pg connection is known to have prepared: those run on it through
 * beginningWithFirstStatement. A statement is prepared on a connection once and lives as long as
 * the connection (the client object).
 */
const preparedOn = new WeakMap<pg.PoolClient, Set<string>>();

/**
 * A pg connection's Sql whose first statement starts the transaction. When that statement is
 * already prepared on the connection and its values can be written as literals, BEGIN and
 * `EXECUTE statement(values)` go in one simple-query message (one round trip fewer, and the
 * statement's prepared plan still used); otherwise BEGIN is sent on its own first. `begun` says
 * whether anything was sent, so that a transaction in which nothing ran is neither committed nor
 * rolled back.
 */
function beginningWithFirstStatement(client: pg.PoolClient, schema: string): { sql: Sql; begun: () => boolean } {
  const plain = sqlFor(client, true, schema);
  let prepared = preparedOn.get(client);
  if (!prepared) {
    prepared = new Set();
    preparedOn.set(client, prepared);
  }
  const known = prepared;
  const runPlain = async <R>(statement: Statement, values: unknown[]) => {
    const result = await plain.run<R>(statement, values);
    known.add(statementNameIn(statement.name, schema));
    return result;
  };
  let begun = false;
  const sql: Sql = {
    inTransaction: true,
    async run<R>(statement: Statement, values: unknown[]) {
      if (begun) return runPlain<R>(statement, values);
      begun = true;
      const name = statementNameIn(statement.name, schema);
      const args = known.has(name) ? literalArguments(values, (value) => client.escapeLiteral(value)) : null;
      if (args === null) {
        await client.query(BEGIN_READ_COMMITTED);
        return runPlain<R>(statement, values);
      }
      // Two statements in one message answer with one result each; the statement's is the last.
      const results = (await client.query(
        `${BEGIN_READ_COMMITTED}; EXECUTE ${client.escapeIdentifier(name)}${args}`,
      )) as unknown as pg.QueryResult[];
      const result = results.at(-1);
      if (!result) throw new Error("BEGIN and EXECUTE in one message answered no result");
      return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
    },
  };
  return { sql, begun: () => begun };
}

/**
 * Runs `fn` in a new READ COMMITTED transaction on `db`, handing it the transaction as an Sql
 * (for the library's statements) and as the native handle (for the caller's writes).
 *
 * `firstStatementBegins`: the caller promises that `fn` runs one of the Sql's statements before it
 * uses the native handle (a step claims before it runs). On pg, BEGIN then travels with that first
 * statement when it can (beginningWithFirstStatement) instead of taking a round trip of its own.
 */
export async function inNewTransaction<T>(
  db: EffectsDb,
  fn: (sql: Sql, tx: TransactionHandle) => Promise<T>,
  options: { timeoutMs?: number; schema?: string; firstStatementBegins?: boolean } = {},
): Promise<T> {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const mysql = mysqlHandleOf(db);
  if (mysql) {
    // The step's own code gets its driver's connection (a mariadb one behind the library's wrapper).
    return inNewMysqlTransaction(mysql as MysqlPoolLike, (connection) =>
      fn(sqlFor(connection, true, schema), nativeHandleOf(connection) as TransactionHandle),
    );
  }
  if (isPrisma(db)) {
    return (db as PrismaClientLike).$transaction((tx) => fn(sqlFor(tx, true, schema), tx), {
      isolationLevel: "ReadCommitted",
      timeout: options.timeoutMs,
    });
  }
  let broken = false;
  // A connection cut between two of the step's queries is an 'error' event on the client: mark
  // it broken (it is not returned to the pool) and let the pending or next query fail.
  const onConnectionError = () => {
    broken = true;
  };
  const client = await connectListening(db as pg.Pool, onConnectionError);
  try {
    const deferred = options.firstStatementBegins ? beginningWithFirstStatement(client, schema) : null;
    if (!deferred) await client.query(BEGIN_READ_COMMITTED);
    try {
      const value = await fn(deferred?.sql ?? sqlFor(client, true, schema), client);
      if (deferred && !deferred.begun()) return value; // nothing ran: there is no transaction to end
      // A statement that failed inside `fn`, its error caught there, leaves the transaction aborted,
      // and the server answers COMMIT with a ROLLBACK, not an error: nothing was committed, the
      // claim (which a transactional step may have written completed) included. Say so.
      if ((client as { getTransactionStatus?: () => string | null }).getTransactionStatus?.() === "E") {
        throw abortedTransaction();
      }
      const committed = await client.query("COMMIT");
      if (committed.command !== "COMMIT") throw abortedTransaction();
      return value;
    } catch (error) {
      if (!deferred || deferred.begun()) {
        await client.query("ROLLBACK").catch(() => {
          broken = true;
        });
      }
      throw error;
    }
  } finally {
    client.off("error", onConnectionError);
    client.release(broken ? true : undefined);
  }
}

function abortedTransaction(): EffectsDatabaseError {
  const cause = Object.assign(
    new Error("current transaction is aborted: a statement inside the step failed and its error was caught"),
    { code: "25P02" },
  );
  return new EffectsDatabaseError(`effects statement failed: ${cause.message}; nothing was committed`, { cause });
}

/**
 * Refuses a `tx` that is not inside a transaction block, before anything is claimed. Sound for the
 * handles the library documents:
 * - pg Client / PoolClient: node-postgres records the transaction status of every ReadyForQuery
 *   the server sends (`getTransactionStatus()`: I idle, T in a block, E failed block). If it is not
 *   T (say a BEGIN was sent but not awaited), one `SELECT 1` on the same connection brings the
 *   status up to date, and it must be T then.
 * - a pg Pool or a PrismaClient: never a transaction (Prisma hides $connect / $disconnect on the
 *   interactive-transaction client it passes to $transaction's callback; the top-level client has them).
 * - anything else with $queryRawUnsafe (a Prisma transaction client): trusted, it only exists
 *   inside $transaction.
 * - Drizzle, Kysely, postgres.js: each has a transaction class that only exists inside its
 *   transaction callback (Drizzle's PgTransaction, Kysely's `isTransaction`, postgres.js's
 *   `savepoint`, which only begin()'s sql has); their top-level handles are refused.
 * - a mysql2 or mariadb connection: the status flags of the server's answer to `DO 0` (SERVER_STATUS_IN_TRANS),
 *   and its isolation level (mysql.ts: READ UNCOMMITTED is refused); a pool of either driver: never.
 * - a bare `{ query }` wrapper: asks the server, `now() <> statement_timestamp()`: in autocommit
 *   every statement is its own transaction, so the two are equal; after BEGIN the statement starts
 *   a round trip later than the transaction. (Only the wrapper case relies on this.)
 */
export async function assertInTransaction(handle: unknown): Promise<void> {
  if (isMysqlEngine(handle)) return assertMysqlInTransaction(handle);
  if (isPostgresJs(handle)) {
    if (typeof handle.savepoint === "function") return;
    throw new NotInTransactionError("postgres.js's top-level sql, not the sql that sql.begin() passes to its callback");
  }
  if (!handle || typeof handle !== "object") throw new NotInTransactionError(`got ${handle === null ? "null" : typeof handle}`);
  if (isPgPool(handle)) throw new NotInTransactionError("a pg.Pool: each query may run on another connection, in autocommit");
  if (isDrizzle(handle)) {
    if (drizzleKinds(handle).includes("PgTransaction")) return;
    throw new NotInTransactionError("a Drizzle database, not the tx that db.transaction() passes to its callback");
  }
  if (isKysely(handle)) {
    if (handle.isTransaction) return;
    throw new NotInTransactionError("a Kysely instance, not the trx that db.transaction().execute() passes to its callback");
  }
  if (isPrismaOnMysql(handle)) {
    throw new InvalidEffectInputError(
      `${PRISMA_ON_MYSQL_REFUSED}, and a connection of that pool inside beginTransaction() as \`tx\``,
      {
        field: "tx",
      },
    );
  }
  if (isPrisma(handle)) {
    if (typeof (handle as { $connect?: unknown }).$connect === "function") {
      throw new NotInTransactionError("a PrismaClient, not the client $transaction passes to its callback");
    }
    return;
  }
  const client = handle as PgQueryable & { getTransactionStatus?: () => string | null };
  if (typeof client.query !== "function") throw new NotInTransactionError("no query() method");
  if (typeof client.getTransactionStatus === "function") {
    let status = client.getTransactionStatus();
    if (status !== "T" && status !== "E") {
      await client.query("SELECT 1").catch(() => {});
      status = client.getTransactionStatus();
    }
    if (status === "T") return;
    throw new NotInTransactionError(
      status === "E" ? "the transaction already failed: roll it back" : "the client is not inside BEGIN ... COMMIT",
    );
  }
  const { rows } = await client.query("SELECT now() <> statement_timestamp() AS in_block");
  if ((rows[0] as { in_block?: boolean } | undefined)?.in_block !== true) {
    throw new NotInTransactionError("the connection is in autocommit (no BEGIN)");
  }
}

const warnedPools = new WeakSet<object>();

/**
 * A pg.Pool without an 'error' listener crashes the process when an idle client's connection is
 * cut (a restart, pg_terminate_backend): pg-pool re-emits the error on the pool. Says so once per pool.
 */
export function warnIfPoolUnguarded(db: EffectsDb, warn: (message: string) => void): void {
  if (!isPgPool(db) || warnedPools.has(db)) return;
  warnedPools.add(db);
  if (db.listenerCount("error") > 0) return;
  warn(
    "the pg.Pool given to createEffects has no 'error' listener: an idle connection cut by the server (restart, pg_terminate_backend) will crash the process. Add pool.on('error', (err) => log.warn(err)) where you create the pool.",
  );
}
