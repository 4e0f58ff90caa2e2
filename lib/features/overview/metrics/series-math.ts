import type { TenantRow, ViolationSeries } from "../contract";
import { MAX_POINTS } from "../overview-types";

/** Steps the charts use: whole minutes up to a day, so rollup minutes (and hours) never split across points. */
const NICE_STEPS = [60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400] as const;

/**
 * Pixels per point: a point every 4 px is as fine as a line or a stacked area can show (a 720 px
 * chart of 24 h steps 10 min: 144 points, not 720; 30 d steps 6 h), and the read and the answer
 * shrink with it (a stacked chart of 50 job types is points × 50 cells).
 */
const PIXELS_PER_POINT = 4;

/**
 * The step (seconds) for a chart `width` pixels wide over `rangeSeconds`: about one point per
 * PIXELS_PER_POINT pixels, never finer than the rollups' minute, never more than MAX_POINTS points
 * (Prometheus query_range refuses more than 11,000).
 */
export function chooseStep(rangeSeconds: number, width: number): number {
  const points = Math.max(1, width / PIXELS_PER_POINT);
  const wanted = Math.max(60, rangeSeconds / points, rangeSeconds / MAX_POINTS);
  for (const step of NICE_STEPS) if (step >= wanted) return step;
  return Math.ceil(wanted / 86_400) * 86_400;
}

export interface Buckets {
  stepSeconds: number;
  /** Start of the first bucket (epoch ms), aligned to the step. */
  originMs: number;
  /** End of each bucket (epoch ms): the point's timestamp, like Prometheus' increase(x[step]) at t. */
  timestamps: number[];
}

/** Buckets covering [from, to]: `from` snapped down and `to` snapped up to the step (UTC-aligned). */
export function bucketsFor(from: Date, to: Date, stepSeconds: number): Buckets {
  const stepMs = stepSeconds * 1000;
  const originMs = Math.floor(from.getTime() / stepMs) * stepMs;
  const endMs = Math.max(originMs + stepMs, Math.ceil(to.getTime() / stepMs) * stepMs);
  const timestamps: number[] = [];
  for (let t = originMs + stepMs; t <= endMs; t += stepMs) timestamps.push(t);
  return { stepSeconds, originMs, timestamps };
}

/** Index of the bucket holding an event at `atMs`, or -1 outside the buckets. */
export function bucketIndex(buckets: Buckets, atMs: number): number {
  const i = Math.floor((atMs - buckets.originMs) / (buckets.stepSeconds * 1000));
  return i >= 0 && i < buckets.timestamps.length ? i : -1;
}

/** Counts per bucket → events per second (null stays null). */
export function perSecond(counts: (number | null)[], stepSeconds: number): (number | null)[] {
  return counts.map((c) => (c === null ? null : c / stepSeconds));
}

/**
 * The q-quantile of a histogram given as per-bucket counts (not cumulative) for `bounds` then +Inf,
 * interpolated linearly inside the bucket exactly as Prometheus' histogram_quantile does (the
 * lowest bucket starts at 0; a quantile in +Inf answers the highest finite bound). Null when empty.
 */
export function histogramQuantile(q: number, bounds: readonly number[], counts: readonly number[]): number | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total <= 0) return null;
  const rank = q * total;
  let cumulative = 0;
  for (let i = 0; i < counts.length; i++) {
    const count = counts[i] ?? 0;
    if (cumulative + count >= rank && count > 0) {
      if (i >= bounds.length) return bounds[bounds.length - 1] ?? null;
      const lower = i === 0 ? 0 : (bounds[i - 1] ?? 0);
      const upper = bounds[i] ?? lower;
      return lower + (upper - lower) * ((rank - cumulative) / count);
    }
    cumulative += count;
  }
  return bounds[bounds.length - 1] ?? null;
}

/** The "not wired up" rule: redelivered over the range, yet nothing suppressed. */
export function notWiredUp(redeliveries: number, suppressions: number): boolean {
  return redeliveries > 0 && suppressions === 0;
}

/**
 * The tenants to look at first: most uncaught violations (a bug), then most stuck claims (a
 * crash), then most suppressions (heavy redelivery), then by name; tenants with nothing are left out.
 */
export function rankTenants(rows: TenantRow[], limit = 10): TenantRow[] {
  return rows
    .filter((r) => r.violations + r.stuck + r.suppressions > 0)
    .sort(
      (a, b) =>
        b.violations - a.violations || b.stuck - a.stuck || b.suppressions - a.suppressions || a.tenant.localeCompare(b.tenant),
    )
    .slice(0, limit);
}

/**
 * Adds `count` to bucket `i` of the (job type, constraint) line of `lines`, made with `points`
 * zeroes the first time the pair is seen: one line per pair, however the rows were grouped.
 */
export function addToViolationLine(
  lines: Map<string, ViolationSeries>,
  row: { job_type: string; constraint_name: string },
  i: number,
  count: number,
  points: number,
): void {
  const id = `${row.job_type}\u0001${row.constraint_name}`;
  let line = lines.get(id);
  if (!line) {
    line = {
      name: `${row.job_type} · ${row.constraint_name}`,
      jobType: row.job_type,
      constraint: row.constraint_name,
      values: new Array<number>(points).fill(0),
    };
    lines.set(id, line);
  }
  line.values[i] = (line.values[i] ?? 0) + count;
}
