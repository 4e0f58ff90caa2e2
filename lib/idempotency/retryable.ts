/**
 * The one table of transient database errors, and the one place they are retried.
 * Anything not listed here is not retried: a constraint or syntax error would fail again.
 */
export const RETRYABLE_SQLSTATES: Readonly<Record<string, string>> = {
  "40001": "serialization_failure",
  "40P01": "deadlock_detected",
  "57P01": "admin_shutdown",
  "57P02": "crash_shutdown",
  "57P03": "cannot_connect_now",
  "08000": "connection_exception",
  "08001": "sqlclient_unable_to_establish_sqlconnection",
  "08003": "connection_does_not_exist",
  "08004": "sqlserver_rejected_establishment_of_sqlconnection",
  "08006": "connection_failure",
};

/** Node / pg errors of a connection that broke or never formed. */
export const RETRYABLE_NETWORK_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

const CONNECTION_MESSAGES = [/Connection terminated/i, /connection.*(ended|closed)/i, /timeout exceeded when trying to connect/i];

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

export function isRetryable(error: unknown): boolean {
  const state = sqlStateOf(error);
  if (state && state in RETRYABLE_SQLSTATES) return true;
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "string" && RETRYABLE_NETWORK_CODES.has(code)) return true;
  const message = error instanceof Error ? error.message : "";
  return CONNECTION_MESSAGES.some((re) => re.test(message));
}

export interface RetryOptions {
  attempts?: number;
  baseDelayMs?: number;
  onRetry?: (error: unknown, attempt: number) => void;
}

/**
 * Runs `fn`, retrying transient errors with jittered exponential backoff. Only for work that is
 * safe to repeat as a whole: a statement in autocommit, or a transaction the library owns.
 */
export async function withRetry<T>(fn: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? 4;
  const base = options.baseDelayMs ?? 25;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt >= attempts || !isRetryable(error)) throw error;
      options.onRetry?.(error, attempt);
      const delay = base * 2 ** (attempt - 1) * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
