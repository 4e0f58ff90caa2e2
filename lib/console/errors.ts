/**
 * What can go wrong when the console asks the database a question, as codes the API layer maps to
 * HTTP statuses (lib/api/errors.ts). Messages are safe to show: no SQL, no stack, no password.
 */
export type ConsoleErrorCode = "DATABASE_UNAVAILABLE" | "DATABASE_NOT_CONFIGURED" | "QUERY_TIMEOUT" | "METRICS_SOURCE_FAILED";

export class ConsoleError extends Error {
  readonly code: ConsoleErrorCode;
  constructor(code: ConsoleErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ConsoleError";
    this.code = code;
  }
}

// SQLSTATEs and socket errors that mean "the server is not there (right now)", not "your query is wrong".
const UNAVAILABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300", "08000", "08001", "08003", "08004", "08006"]);
const UNAVAILABLE_SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EPIPE",
]);

/**
 * Turns a pg error into a ConsoleError when it is about reachability or time; anything else (a bug
 * in a query) is returned unchanged so it surfaces as a 500.
 */
export function translateDatabaseError(error: unknown): unknown {
  if (error instanceof ConsoleError) return error;
  const err = error as { code?: string; message?: string; name?: string } | undefined;
  const code = err?.code ?? "";
  const message = err?.message ?? "";
  if (code === "57014") {
    return new ConsoleError("QUERY_TIMEOUT", "the database did not answer within the console's statement_timeout", {
      cause: error,
    });
  }
  if (code === "3D000") {
    return new ConsoleError("DATABASE_UNAVAILABLE", "the configured database does not exist", { cause: error });
  }
  if (code === "28P01" || code === "28000") {
    return new ConsoleError("DATABASE_UNAVAILABLE", "the database refused the console's login", { cause: error });
  }
  if (
    UNAVAILABLE_SQLSTATES.has(code) ||
    UNAVAILABLE_SOCKET_CODES.has(code) ||
    /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED/i.test(message)
  ) {
    const reason = code === "ECONNREFUSED" || /ECONNREFUSED/.test(message) ? "connection refused" : code || message;
    return new ConsoleError("DATABASE_UNAVAILABLE", `cannot reach PostgreSQL (${reason})`, { cause: error });
  }
  if (error instanceof AggregateError && error.errors.length > 0) {
    // pg reports a refused dual-stack connect (::1 and 127.0.0.1) as an AggregateError.
    const inner = translateDatabaseError(error.errors[0]);
    if (inner instanceof ConsoleError) return inner;
  }
  return error;
}
