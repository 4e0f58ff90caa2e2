/**
 * What can go wrong when the console asks the database a question, as codes the API layer maps to
 * HTTP statuses (lib/api/errors.ts). Messages are safe to show: no SQL, no stack, no password.
 */
import { classifyDatabaseError } from "../idempotency/admin";

export type ConsoleErrorCode =
  | "DATABASE_UNAVAILABLE"
  | "DATABASE_NOT_CONFIGURED"
  | "QUERY_TIMEOUT"
  | "METRICS_SOURCE_FAILED"
  | "NOT_ON_THIS_EFFECTS_STORE";

/**
 * The refusals a console rule states without knowing HTTP: a scope asked for what it cannot read, a
 * retention change the settings refuse. The route layer gives each code its status once
 * (ERROR_STATUS, lib/api/errors.ts), so lib/auth and the features never name a status.
 */
export type DomainErrorCode = "INVALID_INPUT" | "FORBIDDEN" | "RETENTION_REFUSED" | "RETENTION_INVALID" | "RETENTION_STALE";

/** The fields at fault in a refusal: an API answer lists them as its issues. */
export interface Issue {
  path: string;
  message: string;
}

/** An error with a code from a closed list and, optionally, the fields at fault. */
export class CodedError<Code extends string> extends Error {
  readonly code: Code;
  readonly issues?: Issue[];
  constructor(code: Code, message: string, issues?: Issue[]) {
    super(message);
    this.code = code;
    this.issues = issues;
  }
}

export class DomainError extends CodedError<DomainErrorCode> {
  override name = "DomainError";
}

export class ConsoleError extends Error {
  readonly code: ConsoleErrorCode;
  constructor(code: ConsoleErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ConsoleError";
    this.code = code;
  }
}

/**
 * SQLSTATE 55000 (object_not_in_prerequisite_state) is what a connection to a database with
 * allow_connections = false gets. For the worker library it is not transient (nobody flips it back
 * in a moment), but for the console it means the same as a server that is down: nothing to read.
 */
const DATABASE_NOT_ACCEPTING_CONNECTIONS = "55000";

/**
 * Turns a pg error into a ConsoleError when it is about reachability or time; anything else (a bug
 * in a query) is returned unchanged so it surfaces as a 500. Which is which comes from the worker
 * library's one table of PostgreSQL error classes (PG_ERROR_CLASSES), not from a copy of it.
 */
export function translateDatabaseError(error: unknown): unknown {
  if (error instanceof ConsoleError) return error;
  const known = classifyDatabaseError(error);
  if (!known) return error;
  if (known.kind === "timeout") {
    return new ConsoleError("QUERY_TIMEOUT", "the database did not answer within the console's statement_timeout", {
      cause: error,
    });
  }
  if (known.code === "3D000" || known.code === "57P04") {
    return new ConsoleError("DATABASE_UNAVAILABLE", "the configured database does not exist", { cause: error });
  }
  if (known.code === DATABASE_NOT_ACCEPTING_CONNECTIONS) {
    return new ConsoleError("DATABASE_UNAVAILABLE", "cannot reach PostgreSQL (the database does not accept connections)", {
      cause: error,
    });
  }
  if (known.code.startsWith("28")) {
    return new ConsoleError("DATABASE_UNAVAILABLE", "the database refused the console's login", { cause: error });
  }
  if (known.kind === "connection" || known.kind === "resources") {
    const reason = known.code === "ECONNREFUSED" ? "connection refused" : known.code === "connection" ? known.name : known.code;
    return new ConsoleError("DATABASE_UNAVAILABLE", `cannot reach PostgreSQL (${reason})`, { cause: error });
  }
  return error;
}

/** MySQL's and MariaDB's error number for a database that does not exist (the library's table classifies the rest). */
const MYSQL_BAD_DATABASE = 1049;

/**
 * translateDatabaseError for the MySQL effects store (EFFECTS_DATABASE_URL), whose messages name
 * it: reachability and time become ConsoleErrors, anything else is returned unchanged (a 500).
 */
export function translateMysqlDatabaseError(error: unknown): unknown {
  if (error instanceof ConsoleError) return error;
  const store = "the MySQL effects store (EFFECTS_DATABASE_URL)";
  const errno = (error as { errno?: unknown } | null)?.errno;
  if (errno === MYSQL_BAD_DATABASE)
    return new ConsoleError("DATABASE_UNAVAILABLE", `${store}: the configured database does not exist`, { cause: error });
  const known = classifyDatabaseError(error);
  if (!known) return error;
  if (known.kind === "timeout")
    return new ConsoleError("QUERY_TIMEOUT", `${store} did not answer within the console's statement timeout`, { cause: error });
  if (known.kind === "config")
    return new ConsoleError("DATABASE_UNAVAILABLE", `${store} refused the console's login or access`, { cause: error });
  if (known.kind === "connection" || known.kind === "resources")
    return new ConsoleError("DATABASE_UNAVAILABLE", `cannot reach ${store} (${known.code})`, { cause: error });
  return error;
}

/**
 * A read or an action the console does not have on a MySQL or MariaDB effects store: a 501 naming
 * the feature and why, never a 500 from SQL written for PostgreSQL.
 */
export class NotOnThisEffectsStoreError extends ConsoleError {
  constructor(feature: string, why: string) {
    super(
      "NOT_ON_THIS_EFFECTS_STORE",
      `${feature} is not available when the effects store is MySQL or MariaDB (EFFECTS_DATABASE_URL): ${why}`,
    );
    this.name = "NotOnThisEffectsStoreError";
  }
}
