import { NotInTransactionError } from "./errors";
import { DEFAULT_SCHEMA, inSchema } from "./schema";

/**
 * MySQL 8 and MariaDB through mysql2's promise API, the second engine the library runs on
 * (stores/mysql.ts). Typed structurally: mysql2 is an optional peer, loaded only when a caller
 * hands the library a mysql2 pool or a mysql:// URL, and the library's types never name it.
 */

/** A mysql2 promise result: rows for a SELECT, a result-set header for a write, arrays of both for a CALL. */
export type MysqlResult = [unknown, unknown];

/** What the library calls on a mysql2/promise connection (a PoolConnection, or a Connection). */
export interface MysqlConnectionLike {
  query(sql: string, values?: unknown): Promise<MysqlResult>;
  execute(sql: string, values?: unknown): Promise<MysqlResult>;
  beginTransaction(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  /** mysql2's core connection, which the promise wrapper holds: its threadId is the server's connection id. */
  readonly connection: { readonly threadId: number | null };
}

/** mysql2/promise's Pool: `mysql.createPool(…)` from "mysql2/promise", or `pool.promise()`. */
export interface MysqlPoolLike {
  getConnection(): Promise<MysqlConnectionLike & { release(): void; destroy?(): void }>;
  query(sql: string, values?: unknown): Promise<MysqlResult>;
  execute(sql: string, values?: unknown): Promise<MysqlResult>;
  end(): Promise<void>;
  /** The core (callback) pool the promise pool wraps. */
  readonly pool: { getConnection: unknown; config?: unknown };
}

/** What stores/mysql.ts runs a statement on: a pool (autocommit, a connection per statement) or one connection. */
export type MysqlHandle = MysqlPoolLike | MysqlConnectionLike;

/**
 * The `mariadb` driver's promise API (`mariadb.createPool(…)`, its connections), the driver Prisma's
 * `@prisma/adapter-mariadb` runs on. Typed structurally as mysql2 is; mysqlHandleOf() puts it
 * behind mysql2's shape, so the store and everything after it see one kind of handle.
 */
export interface MariadbConnectionLike {
  query(sql: string | Record<string, unknown>, values?: unknown): Promise<unknown>;
  execute(sql: string | Record<string, unknown>, values?: unknown): Promise<unknown>;
  beginTransaction(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  batch(sql: string, values?: unknown): Promise<unknown>;
  isValid(): boolean;
  readonly threadId: number | null;
  /** The server status flags of the last OK packet (SERVER_STATUS_IN_TRANS among them). */
  readonly info: { readonly status?: number } | null;
}

/** `mariadb.createPool(…)`. */
export interface MariadbPoolLike {
  getConnection(): Promise<MariadbConnectionLike & { release(): Promise<void>; destroy(): void }>;
  query(sql: string | Record<string, unknown>, values?: unknown): Promise<unknown>;
  execute(sql: string | Record<string, unknown>, values?: unknown): Promise<unknown>;
  batch(sql: string, values?: unknown): Promise<unknown>;
  activeConnections(): number;
  end(): Promise<void>;
}

export function isMariadbPool(db: unknown): db is MariadbPoolLike {
  const d = db as Partial<MariadbPoolLike> | null | undefined;
  return (
    typeof d?.getConnection === "function" &&
    typeof d.execute === "function" &&
    typeof d.batch === "function" &&
    typeof d.activeConnections === "function"
  );
}

export function isMariadbConnection(handle: unknown): handle is MariadbConnectionLike {
  const h = handle as Partial<MariadbConnectionLike> | null | undefined;
  return (
    typeof h?.execute === "function" &&
    typeof h.beginTransaction === "function" &&
    typeof h.batch === "function" &&
    typeof h.isValid === "function" &&
    "info" in h
  );
}

/**
 * Per-statement options that make the mariadb driver answer as mysql2 does for the library's
 * statements, whatever the caller's pool says: JSON as text (the store parses outcomes itself),
 * BIGINT and COUNT(*) as numbers (strings past 2^53) rather than BigInt.
 */
const MARIADB_STATEMENT = { jsonStrings: true, supportBigNumbers: true, insertIdAsNumber: true } as const;

/** The driver's own object behind a handle mysqlHandleOf() made, to give back to the caller's code. */
const native = new WeakMap<object, object>();
const handles = new WeakMap<object, MysqlHandle>();

/**
 * A mariadb result in mysql2's shape: `[rows | header | [resultSet…, header], fields]`. A write's
 * header gains the connection's server status, which mysql2 reports in every OK packet and the
 * mariadb driver keeps on `info.status`.
 */
function mariadbResult(value: unknown, connection?: MariadbConnectionLike): MysqlResult {
  if (connection && isHeader(value)) {
    return [{ ...(value as object), serverStatus: connection.info?.status ?? 0 }, undefined];
  }
  return [value, undefined];
}

function mariadbConnectionHandle(
  connection: MariadbConnectionLike & { release?(): Promise<void>; destroy?(): void },
): MysqlConnectionLike & { release(): void; destroy?(): void } {
  const handle = {
    query: async (sql: string, values?: unknown) =>
      mariadbResult(await connection.query({ sql, ...MARIADB_STATEMENT }, values), connection),
    execute: async (sql: string, values?: unknown) =>
      mariadbResult(await connection.execute({ sql, ...MARIADB_STATEMENT }, values), connection),
    beginTransaction: () => connection.beginTransaction(),
    commit: () => connection.commit(),
    rollback: () => connection.rollback(),
    connection: {
      get threadId() {
        return connection.threadId;
      },
    },
    // The pool's release() is a promise that only fails when the pool is closing: nothing to wait for.
    release: () => void connection.release?.().catch(() => {}),
    destroy: typeof connection.destroy === "function" ? () => connection.destroy?.() : undefined,
  };
  native.set(handle, connection);
  return handle;
}

function mariadbPoolHandle(pool: MariadbPoolLike): MysqlPoolLike {
  const getConnection = async () => mariadbConnectionHandle(await pool.getConnection());
  const handle: MysqlPoolLike = {
    getConnection,
    query: async (sql, values) => mariadbResult(await pool.query({ sql, ...MARIADB_STATEMENT }, values)),
    execute: async (sql, values) => mariadbResult(await pool.execute({ sql, ...MARIADB_STATEMENT }, values)),
    end: () => pool.end(),
    pool: { getConnection },
  };
  native.set(handle, pool);
  return handle;
}

/**
 * The MySQL handle for `db`: a mysql2 pool or connection as it is; a mariadb pool or connection
 * behind mysql2's shape (the same wrapper for the same object); anything else null.
 */
export function mysqlHandleOf(db: unknown): MysqlHandle | null {
  if (isMysqlPool(db) || isMysqlConnection(db)) return db;
  if (typeof db !== "object" || db === null) return null;
  const known = handles.get(db);
  if (known) return known;
  const handle = isMariadbPool(db) ? mariadbPoolHandle(db) : isMariadbConnection(db) ? mariadbConnectionHandle(db) : null;
  if (handle) handles.set(db, handle);
  return handle;
}

/**
 * A PrismaClient, or the client its $transaction passes, on a MySQL driver adapter
 * (@prisma/adapter-mariadb): Prisma's own `_activeProvider`, which both carry.
 */
export function isPrismaOnMysql(handle: unknown): boolean {
  const h = handle as { $queryRawUnsafe?: unknown; _activeProvider?: unknown } | null | undefined;
  return typeof h?.$queryRawUnsafe === "function" && h._activeProvider === "mysql";
}

/**
 * Why the library refuses Prisma on MySQL, and what to pass instead. Checked with Prisma 7.10 and
 * adapter-mariadb 7.10: `$queryRawUnsafe("CALL p(?)")` answers `[{ undefined: [7, "y"] }, { undefined: 0 }]`
 * for a procedure that selects `7 AS x, 'y' AS z`: the adapter drops a CALL's column names, and
 * every claim on MySQL is a CALL whose result the store reads by name.
 */
export const PRISMA_ON_MYSQL_REFUSED =
  "Prisma on MySQL/MariaDB (@prisma/adapter-mariadb) cannot run the MySQL store's claims: its raw queries drop the column names of a stored procedure's result. Pass the mariadb pool the adapter runs on (new PrismaMariaDb(pool)) as `db`";

/** What the caller's own code gets for a handle: the mariadb connection behind a wrapper, else the handle itself. */
export function nativeHandleOf<T extends object>(handle: T): T {
  return (native.get(handle) as T | undefined) ?? handle;
}

export function isMysqlPool(db: unknown): db is MysqlPoolLike {
  const d = db as Partial<MysqlPoolLike> | null | undefined;
  return (
    typeof d?.getConnection === "function" &&
    typeof d.execute === "function" &&
    typeof d.pool === "object" &&
    d.pool !== null &&
    typeof (d.pool as { getConnection?: unknown }).getConnection === "function"
  );
}

/** mysql2's callback pool (`mysql.createPool` from "mysql2"): the library needs its `.promise()`. */
export function isMysqlCallbackPool(db: unknown): boolean {
  const d = db as { promise?: unknown; getConnection?: unknown; config?: { connectionConfig?: unknown } } | null | undefined;
  return typeof d?.promise === "function" && typeof d.getConnection === "function" && d.config?.connectionConfig !== undefined;
}

export function isMysqlConnection(handle: unknown): handle is MysqlConnectionLike {
  const h = handle as Partial<MysqlConnectionLike> | null | undefined;
  return (
    typeof h?.execute === "function" &&
    typeof h.beginTransaction === "function" &&
    typeof h.connection === "object" &&
    h.connection !== null &&
    "threadId" in h.connection
  );
}

export function isMysql(handle: unknown): handle is MysqlHandle {
  return isMysqlPool(handle) || isMysqlConnection(handle);
}

/** A handle for the MySQL store: mysql2's, or the mariadb driver's (which mysqlHandleOf() wraps). */
export function isMysqlEngine(handle: unknown): boolean {
  return isMysql(handle) || isMariadbPool(handle) || isMariadbConnection(handle);
}

/** The rows of a mysql2 result: a SELECT's rows, or a CALL's first result set. */
export function rowsOf<R>(result: MysqlResult): R[] {
  const [first] = result;
  if (!Array.isArray(first)) return [];
  // A CALL answers [result set…, header]; a SELECT answers its rows.
  if (first.length > 0 && Array.isArray(first[0])) return first[0] as R[];
  if (first.length > 0 && isHeader(first[0])) return [];
  return first as R[];
}

function isHeader(value: unknown): boolean {
  return typeof value === "object" && value !== null && "affectedRows" in value && "insertId" in value;
}

/** A write's affected rows (meaning depends on CLIENT_FOUND_ROWS: the library decides nothing by it). */
export function affectedRowsOf(result: MysqlResult): number {
  const [first] = result;
  const header = Array.isArray(first) ? first.find(isHeader) : first;
  return Number((header as { affectedRows?: number } | undefined)?.affectedRows ?? 0);
}

/** An instant as MySQL's DATETIME(3) literal in UTC ('YYYY-MM-DD hh:mm:ss.fff'). */
export function toMysqlTime(date: Date): string {
  return date.toISOString().slice(0, 23).replace("T", " ");
}

/** A DATETIME read back as text (CAST … AS CHAR, UTC) as a Date; a Date (a driver that parsed it) as it is. */
export function fromMysqlTime(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value;
  const text = String(value);
  return new Date(`${text.replace(" ", "T")}${/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? "" : "Z"}`);
}

/** Runs `sql` (the library's `onceboard.` qualifier pointed at `schema`) as a prepared statement. */
export function runMysql(handle: MysqlHandle, sql: string, values: unknown[], schema = DEFAULT_SCHEMA): Promise<MysqlResult> {
  return handle.execute(inSchema(sql, schema), values);
}

/** SERVER_STATUS_IN_TRANS in the status flags of every OK packet: a transaction is open on the connection. */
const SERVER_STATUS_IN_TRANS = 1;

/**
 * Refuses a handle that is not inside a transaction, before anything is claimed: a pool (each
 * statement on another connection, in autocommit), or a connection with no open transaction. The
 * server says which in every OK packet's status flags; `DO 0` asks for one without touching data.
 * Any isolation level will do: the claim decides on locking reads, which see the latest committed
 * row and wait for an uncommitted one, under READ UNCOMMITTED and SERIALIZABLE alike.
 */
export async function assertMysqlInTransaction(db: unknown): Promise<void> {
  if (isMysqlPool(db) || isMariadbPool(db)) {
    throw new NotInTransactionError("a pool: each query may run on another connection, in autocommit");
  }
  const handle = mysqlHandleOf(db);
  if (!handle || !isMysqlConnection(handle)) throw new NotInTransactionError("not a mysql2 or mariadb connection");
  const [header] = await handle.query("DO 0");
  const status = Number((header as { serverStatus?: number }).serverStatus ?? 0);
  if ((status & SERVER_STATUS_IN_TRANS) === 0) {
    throw new NotInTransactionError("the connection is in autocommit (no beginTransaction() / START TRANSACTION)");
  }
}

/**
 * Runs `fn` in a new READ COMMITTED transaction on a connection of `pool` (a transactional step the
 * library opens): committed when `fn` returns, rolled back when it throws. A connection whose
 * ROLLBACK failed is destroyed, not returned to the pool.
 */
export async function inNewMysqlTransaction<T>(
  pool: MysqlPoolLike,
  fn: (connection: MysqlConnectionLike) => Promise<T>,
): Promise<T> {
  const connection = await pool.getConnection();
  let broken = false;
  try {
    await connection.query("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
    await connection.beginTransaction();
    try {
      const value = await fn(connection);
      await connection.commit();
      return value;
    } catch (error) {
      await connection.rollback().catch(() => {
        broken = true;
      });
      throw error;
    }
  } finally {
    if (broken && typeof connection.destroy === "function") connection.destroy();
    else connection.release();
  }
}

/**
 * A mysql2 promise pool for a mysql:// (or mariadb://) URL, for the library's own short-lived uses
 * (migrate(url), the test kit). CLIENT_FOUND_ROWS off: the library never decides by affected rows,
 * but a count of changed rows is the one the server means.
 */
export async function createMysqlPool(url: string, max = 4): Promise<MysqlPoolLike> {
  const mysql = (await import("mysql2/promise")) as unknown as {
    createPool(config: Record<string, unknown>): MysqlPoolLike;
  };
  return mysql.createPool({
    uri: url.replace(/^mariadb:/, "mysql:"),
    connectionLimit: max,
    flags: ["-FOUND_ROWS"],
    timezone: "Z",
    dateStrings: false,
  });
}

/** A mysql:// or mariadb:// URL: the library's MySQL store. */
export function isMysqlUrl(value: unknown): value is string {
  return typeof value === "string" && /^(mysql|mariadb):\/\//i.test(value);
}
