import { classifyDatabaseError, PG_ERROR_CLASSES, sqlStateOf } from "./pg-errors";

export { sqlStateOf };

/**
 * The transient SQLSTATEs, derived from the one table (PG_ERROR_CLASSES in pg-errors.ts): kept
 * for callers of earlier versions. Exact codes and two-character classes.
 */
export const RETRYABLE_SQLSTATES: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(PG_ERROR_CLASSES)
    .filter(([, e]) => e.transient)
    .map(([code, e]) => [code, e.name]),
);

/** True when the one table marks the error transient (connection, conflict, resources). */
export function isRetryable(error: unknown): boolean {
  return classifyDatabaseError(error)?.transient ?? false;
}

export interface RetryOptions {
  attempts?: number;
  /** Overrides the table's backoff for every class. */
  baseDelayMs?: number;
  onRetry?: (error: unknown, attempt: number) => void;
}

/**
 * Attempts for a conflict (a deadlock, a serialization failure) when the caller sets none. More
 * than for other transient errors: when a transaction holding a new key rolls back, InnoDB wakes its
 * waiters into a deadlock and kills all but one (its duplicate-key check takes gap locks at every
 * isolation level), and the survivors' retries can deadlock again among themselves until one of
 * them has inserted the key. With the backoff doubling from 20 ms, eight attempts span about 2.5 s.
 */
const CONFLICT_ATTEMPTS = 8;

/**
 * Runs `fn`, retrying transient errors with jittered exponential backoff starting at the table's
 * backoff for the error's class. Only for work that is safe to repeat as a whole: a statement in
 * autocommit, or a transaction the library owns.
 */
export async function withRetry<T>(fn: () => Promise<T>, options: RetryOptions = {}): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      const kind = classifyDatabaseError(error);
      const attempts = options.attempts ?? (kind?.kind === "conflict" ? CONFLICT_ATTEMPTS : 4);
      if (attempt >= attempts || !kind?.transient) throw error;
      options.onRetry?.(error, attempt);
      const base = options.baseDelayMs ?? kind.backoffMs;
      const delay = base * 2 ** (attempt - 1) * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
