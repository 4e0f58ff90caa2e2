import { type DatabaseErrorClass, type DatabaseErrorClassEntry, errorClassEntry as entry } from "./db-error-class";
import { classifyMysqlError, isMysqlLockTimeout, isMysqlPartitionMissing } from "./mysql-errors";

export type { DatabaseErrorClass, DatabaseErrorClassEntry, DatabaseErrorKind } from "./db-error-class";

/**
 * The one table of PostgreSQL error classes: which failures are transient (try again: the same
 * statement can succeed in a moment) and how long to back off first, per SQLSTATE or SQLSTATE
 * class (the first two characters). Like graphile-worker's RETRYABLE_ERROR_CODES, but with a kind
 * and a backoff per entry. The library retries by it (withRetry), broker adapters classify by it
 * (classifyError), and the console and the start path phrase database failures by it.
 *
 * An exact SQLSTATE wins over its class. Anything not listed is not transient: a constraint or a
 * syntax error fails again however often it is retried.
 */
export const PG_ERROR_CLASSES: Readonly<Record<string, DatabaseErrorClassEntry>> = {
  // Class 08: connection exception.
  "08": entry("connection_exception", "connection", 100),
  // Class 40: transaction rollback (serialization_failure 40001, deadlock_detected 40P01, ...).
  "40": entry("transaction_rollback", "conflict", 20),
  // Class 53: insufficient resources (53300 too_many_connections, 53200 out_of_memory, 53100 disk_full).
  "53": entry("insufficient_resources", "resources", 500),
  "53100": entry("disk_full", "resources"), // not transient: nobody frees the disk for us in a moment
  // Class 57: operator intervention.
  "57": entry("operator_intervention", "statement"),
  "57014": entry("query_canceled", "timeout"),
  "57P01": entry("admin_shutdown", "connection", 100), // pg_terminate_backend, a fast shutdown
  "57P02": entry("crash_shutdown", "connection", 250),
  "57P03": entry("cannot_connect_now", "connection", 500), // the server is starting or in recovery
  "57P04": entry("database_dropped", "config"),
  "55P03": entry("lock_not_available", "timeout"),
  "25P04": entry("idle_in_transaction_session_timeout", "timeout"),
  // Class 28: invalid authorization; 3D000: no such database; 42501: insufficient privilege.
  "28": entry("invalid_authorization_specification", "config"),
  "3D000": entry("invalid_catalog_name", "config"),
  "42501": entry("insufficient_privilege", "config"),
};

/** Node socket errors of a connection that broke or never formed (transient). */
const CONNECTION_ERROR_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

// What node-postgres says, without a code, when a connection broke or is gone.
const CONNECTION_MESSAGES = [
  /Connection terminated/i,
  /Client has encountered a connection error and is not queryable/i,
  /Client was closed and is not queryable/i,
  /Connection ended unexpectedly/i,
  /connection.*(ended|closed)/i,
  /timeout exceeded when trying to connect/i,
];

/**
 * The SQLSTATE of an error from pg (err.code) or from Prisma's pg adapter, which nests the
 * driver error (meta.code, cause.originalCode, …). Searches a few levels deep.
 */
export function sqlStateOf(error: unknown, depth = 0): string | undefined {
  if (!error || typeof error !== "object" || depth > 4) return undefined;
  const e = error as Record<string, unknown>;
  for (const field of ["code", "originalCode", "sqlState"]) {
    const value = e[field];
    if (typeof value === "string" && /^[0-9A-Z]{5}$/.test(value) && !/^P\d{4}$/.test(value)) return value;
  }
  for (const field of ["cause", "meta", "driverAdapterError"]) {
    const found = sqlStateOf(e[field], depth + 1);
    if (found) return found;
  }
  return undefined;
}

function socketCodeOf(error: unknown, depth = 0): string | undefined {
  if (!error || typeof error !== "object" || depth > 4) return undefined;
  const e = error as Record<string, unknown>;
  if (typeof e.code === "string" && CONNECTION_ERROR_CODES.has(e.code)) return e.code;
  if (error instanceof AggregateError) {
    for (const inner of error.errors) {
      const found = socketCodeOf(inner, depth + 1);
      if (found) return found;
    }
  }
  return socketCodeOf(e.cause, depth + 1);
}

/**
 * Looks an error up in the table: by SQLSTATE (exact, then class), then by socket code, then by
 * node-postgres's connection messages. A MySQL or MariaDB error (mysql2's, with the server's
 * error number) is looked up in its own table (mysql-errors.ts). Undefined when it is not a
 * database error we know.
 */
export function classifyDatabaseError(error: unknown): DatabaseErrorClass | undefined {
  // Socket codes first: EPIPE has the shape of a SQLSTATE.
  const socket = socketCodeOf(error);
  if (socket) return { code: socket, ...entry(socket.toLowerCase(), "connection", 100) };
  const mysql = classifyMysqlError(error);
  if (mysql) return mysql;
  const state = sqlStateOf(error);
  if (state) {
    const found = PG_ERROR_CLASSES[state] ?? PG_ERROR_CLASSES[state.slice(0, 2)];
    return found ? { code: state, ...found } : { code: state, ...entry("error", "statement") };
  }
  const message = error instanceof Error ? error.message : "";
  if (CONNECTION_MESSAGES.some((re) => re.test(message))) {
    return { code: "connection", ...entry("connection_lost", "connection", 100) };
  }
  return undefined;
}

/** True for the failures the table marks transient. */
export function isTransientDatabaseError(error: unknown): boolean {
  return classifyDatabaseError(error)?.transient ?? false;
}

/** True when the connection itself broke (class 08, 57P01-57P03, a socket error, pg's messages). */
export function isConnectionError(error: unknown): boolean {
  return classifyDatabaseError(error)?.kind === "connection";
}

/**
 * A lock wait that ran out: PostgreSQL's lock_not_available (55P03, the claim's lock_timeout) or
 * MySQL's 1205 (innodb_lock_wait_timeout). A claim answers it as in flight.
 */
export function isLockTimeout(error: unknown): boolean {
  return sqlStateOf(error) === "55P03" || isMysqlLockTimeout(error);
}

/**
 * The row's time has no partition to go to: PostgreSQL's "no partition of relation … found for
 * row" (23514) or MySQL's 1526. Retrying cannot help; premaking partitions does.
 */
export function isNoPartitionError(error: unknown): boolean {
  if (isMysqlPartitionMissing(error)) return true;
  return sqlStateOf(error) === "23514" && /no partition of relation/i.test(error instanceof Error ? error.message : "");
}
