import { type DatabaseErrorClassEntry, errorClassEntry as entry } from "./db-error-class";

/**
 * The one table of MySQL and MariaDB errors, beside PostgreSQL's (pg-errors.ts; both speak the kinds
 * and backoffs of db-error-class.ts): which are transient and how long to back off first, by the server's error
 * number. The SQLSTATE does not tell them apart: a deadlock (1213) is 40001 but a lock wait that ran
 * out (1205) is HY000 like most errors, and a duplicate key (1062) is 23000 like NOT NULL (1048).
 * Anything not listed is not transient.
 */
export const MYSQL_ERROR_CLASSES: Readonly<Record<number, DatabaseErrorClassEntry>> = {
  // Two transactions collided: InnoDB rolled this one back (Galera's certification failure too).
  1213: entry("ER_LOCK_DEADLOCK", "conflict", 20),
  // The table changed under a consistent snapshot (a DROP PARTITION, say): rerun the transaction.
  1412: entry("ER_TABLE_DEF_CHANGED", "conflict", 20),
  // MariaDB's innodb_snapshot_isolation: the row changed since this transaction's snapshot.
  1020: entry("ER_CHECKREAD", "conflict", 20),
  // A lock wait ran out (innodb_lock_wait_timeout; a claim sets it to its remaining wait and
  // answers in flight, as for PostgreSQL's lock_not_available). Not retried as a statement: the
  // claim's wait loop polls again, with its own bound.
  1205: entry("ER_LOCK_WAIT_TIMEOUT", "timeout"),
  3572: entry("ER_LOCK_NOWAIT", "timeout"),
  1317: entry("ER_QUERY_INTERRUPTED", "timeout"),
  1969: entry("ER_STATEMENT_TIMEOUT", "timeout"),
  3024: entry("ER_QUERY_TIMEOUT", "timeout"),
  // The server is short of connections or transactions: try again after a longer pause.
  1040: entry("ER_CON_COUNT_ERROR", "resources", 500),
  1203: entry("ER_TOO_MANY_USER_CONNECTIONS", "resources", 500),
  1637: entry("ER_TOO_MANY_CONCURRENT_TRXS", "resources", 500),
  1114: entry("ER_RECORD_FILE_FULL", "resources"), // not transient: nobody frees the disk for us in a moment
  1021: entry("ER_DISK_FULL", "resources"),
  // The connection broke, the server is going away, or a failover left us on a read-only server.
  1053: entry("ER_SERVER_SHUTDOWN", "connection", 250),
  1927: entry("ER_CONNECTION_KILLED", "connection", 100),
  1047: entry("ER_UNKNOWN_COM_ERROR", "connection", 500), // Galera: WSREP has not yet prepared the node
  1290: entry("ER_OPTION_PREVENTS_STATEMENT", "connection", 500), // --read-only (a replica being promoted)
  1836: entry("ER_READ_ONLY_MODE", "connection", 500),
  1792: entry("ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION", "connection", 500),
  2006: entry("CR_SERVER_GONE_ERROR", "connection", 100),
  2013: entry("CR_SERVER_LOST", "connection", 100),
  // Login, database or permission: a configuration problem.
  1044: entry("ER_DBACCESS_DENIED_ERROR", "config"),
  1045: entry("ER_ACCESS_DENIED_ERROR", "config"),
  1049: entry("ER_BAD_DB_ERROR", "config"),
  1142: entry("ER_TABLEACCESS_DENIED_ERROR", "config"),
  1143: entry("ER_COLUMNACCESS_DENIED_ERROR", "config"),
  1370: entry("ER_PROCACCESS_DENIED_ERROR", "config"),
};

/** mysql2's codes for a connection it lost or never made, without a server error number. */
const MYSQL_CONNECTION_CODES: ReadonlySet<string> = new Set([
  "PROTOCOL_CONNECTION_LOST",
  "PROTOCOL_SEQUENCE_TIMEOUT",
  "POOL_CLOSED",
  "ER_CONNECTION_KILLED",
]);

/** The server's error number of a mysql2 error (or one nested in `cause`); undefined for anything else. */
export function mysqlErrnoOf(error: unknown, depth = 0): number | undefined {
  if (!error || typeof error !== "object" || depth > 4) return undefined;
  const e = error as { errno?: unknown; sqlMessage?: unknown; code?: unknown; cause?: unknown };
  if (typeof e.errno === "number" && (typeof e.sqlMessage === "string" || /^(ER|CR)_/.test(String(e.code)))) return e.errno;
  return mysqlErrnoOf(e.cause, depth + 1);
}

/** What the table says about a MySQL error: its entry with the error's name, or undefined when it is not one. */
export function classifyMysqlError(error: unknown): (DatabaseErrorClassEntry & { code: string }) | undefined {
  const errno = mysqlErrnoOf(error);
  if (errno !== undefined) {
    const found = MYSQL_ERROR_CLASSES[errno];
    return found ? { code: String(errno), ...found } : { code: String(errno), ...entry("error", "statement") };
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && MYSQL_CONNECTION_CODES.has(code)) {
    return { code, ...entry(code.toLowerCase(), "connection", 100) };
  }
  return undefined;
}

/** 1062 / 1586: a duplicate key. */
const DUPLICATE_KEY = new Set([1062, 1586]);

/**
 * The index a MySQL duplicate-key error names ("Duplicate entry 'x' for key 'name'"; MySQL 8
 * qualifies it as 'table.name'), or null when `error` is no duplicate key.
 */
export function mysqlDuplicateKeyName(error: unknown): string | null {
  const errno = mysqlErrnoOf(error);
  if (errno === undefined || !DUPLICATE_KEY.has(errno)) return null;
  const message = String((error as { sqlMessage?: unknown }).sqlMessage ?? (error as Error).message ?? "");
  const name = /for key '([^']+)'\s*$/.exec(message)?.[1];
  if (!name) return "unknown";
  return name.slice(name.lastIndexOf(".") + 1);
}

/** 1526: no partition of the table holds the row's value (the premade range ran out, or it was dropped). */
export function isMysqlPartitionMissing(error: unknown): boolean {
  return mysqlErrnoOf(error) === 1526;
}

/** A lock wait that ran out (1205; 3572 for NOWAIT). */
export function isMysqlLockTimeout(error: unknown): boolean {
  const errno = mysqlErrnoOf(error);
  return errno === 1205 || errno === 3572;
}
