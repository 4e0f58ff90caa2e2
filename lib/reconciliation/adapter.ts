import { setTimeout as delay } from "node:timers/promises";

/**
 * A provider adapter lists the provider's objects created in a window, one page at a time, from a
 * cursor the reconciler checkpoints: a run killed mid-way asks again from the last page it staged.
 * Writing one for a new provider is documented in docs/reconciliation.md.
 */
export interface ReconcileWindow {
  /** Inclusive. */
  from: Date;
  /** Exclusive. */
  to: Date;
}

export interface ProviderObject {
  /** The provider's own id ("pi_…"). */
  id: string;
  /** The Onceboard effect key the object carries (metadata.onceboard_key), or null when it carries none. */
  key: string | null;
  /** The tenant it carries (metadata.onceboard_tenant), or null. */
  tenant: string | null;
  /** In the currency's minor unit, as Stripe counts. */
  amount: number | null;
  currency: string | null;
  status: string | null;
  created: Date;
  /** The object's metadata as the provider returned it, for the finding's "theirs" side. */
  metadata: Record<string, string>;
}

export interface ProviderPage {
  objects: ProviderObject[];
  /** Where the next page starts, or null after the last page. Opaque to the reconciler. */
  next: string | null;
}

export interface ProviderAdapter {
  /** The provider's name (matches reconcileProviders()). */
  readonly provider: string;
  /** One page of objects created in [from, to), starting at `cursor` (null: the first page). */
  listPage(window: ReconcileWindow, cursor: string | null): Promise<ProviderPage>;
}

/**
 * Why a provider could not be read: the run ends failed with this message, never "matched".
 * `reason` says which: a refused key, an answer that is not the JSON expected, or retries spent.
 */
export class ProviderReadError extends Error {
  constructor(
    readonly reason: "auth" | "malformed" | "retries_exhausted" | "refused",
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "ProviderReadError";
  }
}

/** A failure worth asking again: a 5xx, a 429 (with the wait the provider asked for), a dropped connection. */
export class RetryableProviderError extends Error {
  constructor(
    message: string,
    readonly retryAfterMs: number | null,
  ) {
    super(message);
    this.name = "RetryableProviderError";
  }
}

export interface RetryPolicy {
  /** Attempts after the first. */
  retries: number;
  /** First backoff; doubles per attempt, with jitter, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  sleep?: (ms: number) => Promise<void>;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { retries: 6, baseDelayMs: 250, maxDelayMs: 30_000 };

/** Retry-After in seconds (or an HTTP date), as milliseconds; null when absent or unreadable. */
export function retryAfterMs(header: string | string[] | null | undefined, now = Date.now()): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value === null || value === "") return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** Calls `read` until it answers, retrying RetryableProviderError with backoff (or Retry-After); other errors pass through. */
export async function withRetries<T>(what: string, policy: RetryPolicy, read: () => Promise<T>): Promise<T> {
  const wait = policy.sleep ?? delay;
  for (let attempt = 0; ; attempt++) {
    try {
      return await read();
    } catch (error) {
      if (!(error instanceof RetryableProviderError)) throw error;
      if (attempt >= policy.retries) {
        throw new ProviderReadError(
          "retries_exhausted",
          `${what}: gave up after ${attempt + 1} attempts; last answer: ${error.message}`,
          { cause: error },
        );
      }
      const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt) * (0.5 + Math.random() / 2);
      // The provider's own Retry-After wins over our backoff: asking sooner only earns another 429.
      await wait(error.retryAfterMs ?? backoff);
    }
  }
}
