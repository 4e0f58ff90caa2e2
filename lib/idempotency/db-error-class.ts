/**
 * What the error tables (pg-errors.ts for PostgreSQL, mysql-errors.ts for MySQL and MariaDB) say
 * about one kind of failure: whether it is transient and how long to back off first.
 */
export type DatabaseErrorKind =
  /** The connection broke, never formed, or the server is going away: reconnect and retry. */
  | "connection"
  /** Two transactions collided (serialization, deadlock): rerun the whole transaction. */
  | "conflict"
  /** The server is short of something (connections, memory, disk): retry after a longer pause. */
  | "resources"
  /** A statement or lock timeout, or a cancel. */
  | "timeout"
  /** Login, database or permission: a configuration problem, not transient. */
  | "config"
  /** Anything else PostgreSQL reports (constraint, syntax, data): not transient. */
  | "statement";

export interface DatabaseErrorClassEntry {
  name: string;
  kind: DatabaseErrorKind;
  transient: boolean;
  /** First backoff before a retry, in ms (doubled per attempt, jittered). 0 when not transient. */
  backoffMs: number;
}

export const errorClassEntry = (name: string, kind: DatabaseErrorKind, backoffMs = 0): DatabaseErrorClassEntry => ({
  name,
  kind,
  transient: backoffMs > 0,
  backoffMs,
});

/** What the table says about one error. */
export interface DatabaseErrorClass extends DatabaseErrorClassEntry {
  /** The SQLSTATE, the socket code (ECONNRESET), or "connection" for pg's own connection messages. */
  code: string;
}
