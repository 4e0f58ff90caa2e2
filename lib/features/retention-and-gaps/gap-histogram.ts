import { GAP_BUCKET_BOUNDS } from "../../idempotency/admin";

/**
 * The redelivery-gap histogram as the console reads it. ONE definition of the buckets: the worker
 * library's GAP_BUCKET_BOUNDS (which feeds prom-client and the rollups); the SQL function
 * onceboard_gap_bucket_bounds() is checked against it by lib/features/retention-and-gaps/gap-histogram.test.ts.
 * A histogram is an array of GAP_BUCKET_BOUNDS.length + 1 counts, the last one open-ended (+Inf).
 */
export const GAP_BOUNDS: readonly number[] = GAP_BUCKET_BOUNDS;
export const BUCKET_COUNT = GAP_BOUNDS.length + 1;

export const emptyHistogram = (): number[] => new Array<number>(BUCKET_COUNT).fill(0);

/** Lower bound (exclusive) of bucket i, in seconds. */
export const bucketLower = (i: number): number => (i === 0 ? 0 : (GAP_BOUNDS[i - 1] ?? Number.POSITIVE_INFINITY));
/** Upper bound (inclusive) of bucket i, in seconds; +Infinity for the open-ended top bucket. */
export const bucketUpper = (i: number): number => GAP_BOUNDS[i] ?? Number.POSITIVE_INFINITY;

/** Adds `b` into `a` element-wise (arrays from the database may be shorter: an empty rollup is '{}'). */
export function addInto(a: number[], b: ArrayLike<number | string | bigint>): number[] {
  for (let i = 0; i < Math.min(b.length, a.length); i++) a[i] = (a[i] ?? 0) + Number(b[i] ?? 0);
  return a;
}

export const total = (h: readonly number[]): number => h.reduce((s, n) => s + n, 0);

/**
 * The q-quantile, interpolated linearly inside its bucket exactly as Prometheus'
 * histogram_quantile does (so the page agrees with a Grafana panel on the same metric). Null when
 * the histogram is empty. A quantile that falls in the open-ended bucket is returned as the last
 * finite bound with `overflow: true`: the real value is unknown, only "more than that".
 */
export function quantile(h: readonly number[], q: number): { seconds: number; overflow: boolean } | null {
  const n = total(h);
  if (n === 0) return null;
  const rank = q * n;
  let seen = 0;
  for (let i = 0; i < h.length; i++) {
    const count = h[i] ?? 0;
    if (count > 0 && seen + count >= rank) {
      const upper = bucketUpper(i);
      if (!Number.isFinite(upper)) return { seconds: bucketLower(i), overflow: true };
      const lower = bucketLower(i);
      return { seconds: lower + (upper - lower) * ((rank - seen) / count), overflow: false };
    }
    seen += count;
  }
  return { seconds: bucketLower(h.length - 1), overflow: true };
}

/** What a histogram says about its largest gap: more than atLeast, at most atMost (+Infinity if open-ended). */
export function maxBounds(h: readonly number[]): { atLeast: number; atMost: number } | null {
  for (let i = h.length - 1; i >= 0; i--) if ((h[i] ?? 0) > 0) return { atLeast: bucketLower(i), atMost: bucketUpper(i) };
  return null;
}

/**
 * Gaps later than `seconds`: `atLeast` counts buckets wholly beyond it, `upTo` adds the bucket it
 * falls inside (whose gaps may be on either side).
 */
export function countBeyond(h: readonly number[], seconds: number): { atLeast: number; upTo: number } {
  let atLeast = 0;
  let upTo = 0;
  h.forEach((count, i) => {
    if (bucketLower(i) >= seconds) atLeast += count;
    if (bucketUpper(i) > seconds) upTo += count;
  });
  return { atLeast, upTo };
}

/** The bucket a gap falls in (Prometheus `le`: the first bound >= gap), else the open-ended one. */
export function bucketOf(seconds: number): number {
  const i = GAP_BOUNDS.findIndex((bound) => seconds <= bound);
  return i === -1 ? GAP_BOUNDS.length : i;
}
