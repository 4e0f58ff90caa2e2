import { classifyDatabaseError } from "../idempotency/admin";

/**
 * Turns a pg/network error into one line a person can act on. The class of the failure comes from
 * the worker library's one table of PostgreSQL error classes (PG_ERROR_CLASSES).
 */
export function describeDatabaseError(error: unknown, url?: string): string {
  const where = url ? ` at ${redactUrl(url)}` : "";
  const err = error as { code?: string; message?: string };
  const known = classifyDatabaseError(error);
  switch (known?.code ?? err?.code) {
    case "ECONNREFUSED":
      return `cannot reach PostgreSQL${where}: connection refused (is the server running?)`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `cannot reach PostgreSQL${where}: host not found`;
    case "ETIMEDOUT":
      return `cannot reach PostgreSQL${where}: connection timed out`;
    case "28P01":
    case "28000":
      return `PostgreSQL${where} refused the login: ${err.message}`;
    case "55000":
      return `cannot reach PostgreSQL${where}: ${err.message}`;
    case "3D000":
      return `PostgreSQL${where}: ${err.message}`;
    default:
      if (known?.kind === "connection" || known?.kind === "resources") {
        return `cannot reach PostgreSQL${where}: ${known.name} (${err?.message ?? String(error)})`;
      }
      return `PostgreSQL${where}: ${err?.message ?? String(error)}`;
  }
}

/** The URL without its password, safe to print. */
export function redactUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.password) url.password = "***";
    return url.toString();
  } catch {
    return "<malformed URL>";
  }
}
