import { loadConfig } from "../config";

interface Bucket {
  tokens: number;
  updatedAt: number;
}

declare global {
  var __onceboardRateBuckets: Map<string, Bucket> | undefined;
}

export interface RateDecision {
  allowed: boolean;
  /** Whole seconds until one more request is allowed (when refused). */
  retryAfterSeconds: number;
}

/**
 * Per-token token bucket, per console process: `perMinute` requests of burst, refilled evenly.
 * In memory on purpose: a limit that needs a database round trip would add to every request.
 */
export function takeToken(key: string, options: { perMinute?: number; now?: number } = {}): RateDecision {
  const perMinute = options.perMinute ?? loadConfig().ONCEBOARD_RATE_LIMIT_PER_MINUTE;
  const now = options.now ?? Date.now();
  globalThis.__onceboardRateBuckets ??= new Map();
  const buckets = globalThis.__onceboardRateBuckets;
  const refillPerMs = perMinute / 60_000;
  const bucket = buckets.get(key) ?? { tokens: perMinute, updatedAt: now };
  bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.updatedAt) * refillPerMs);
  bucket.updatedAt = now;
  buckets.set(key, bucket);
  if (buckets.size > 10_000) {
    // Forget full buckets (tokens idle long enough to refill): they are the default anyway.
    for (const [k, b] of buckets) if (b.tokens >= perMinute && k !== key) buckets.delete(k);
  }
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return { allowed: true, retryAfterSeconds: 0 };
  }
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / refillPerMs / 1000)) };
}

export function resetRateLimits(): void {
  globalThis.__onceboardRateBuckets?.clear();
}
