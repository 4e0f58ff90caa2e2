import type { Queryable } from "../db/types";
import { addInto, BUCKET_COUNT, emptyHistogram } from "./gap-histogram";

export interface GapHistogramDay {
  jobType: string;
  /** UTC midnight of the day (ISO 8601). */
  day: string;
  buckets: number[];
  claimsBeyondRetention: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

// Whole UTC days from worker_gaps_day, whole hours at the window's edges from worker_gaps_hour,
// minutes at the very edges from worker_stats_minute (both summaries kept exact by triggers on
// it, migration 20261201040000_gap_hours): 30 days × 50 job types is about 1,500 day rows, at most
// 2 × 23 × 50 hour rows and 2 × 59 × 50 minute rows, instead of 2.16 million minute rows. One
// column per bucket (gap_buckets[i]) instead of unnest: no row multiplication. Grouped by job
// type and UTC day, so one query feeds both the histograms and the per-day series. Every part is a
// plain range on its table's primary key.
const sumColumns = Array.from({ length: BUCKET_COUNT }, (_, i) => `sum(gap_buckets[${i + 1}])::float8 AS b${i}`).join(", ");
const part = (table: string, column: string, from: string, to: string, upper: "<" | "<=") => `
  SELECT ${column} AS t, job_type, gap_buckets, claims_beyond_retention
    FROM ${table}
   WHERE ${column} >= ${from}::timestamptz AND ${column} ${upper} ${to}::timestamptz AND ($1::text IS NULL OR job_type = $1::text)
     AND (cardinality(gap_buckets) > 0 OR claims_beyond_retention <> 0)`;
const GAP_DAYS_SQL = `
WITH parts AS (${[
  part("worker_gaps_day", "day", "$2", "$3", "<"),
  part("worker_gaps_hour", "hour", "$4", "$5", "<"),
  part("worker_gaps_hour", "hour", "$6", "$7", "<"),
  part("worker_stats_minute", "minute", "$8", "$9", "<"),
  part("worker_stats_minute", "minute", "$10", "$11", "<="),
].join("\n  UNION ALL")}
)
SELECT job_type, date_trunc('day', t, 'UTC') AS day, ${sumColumns}, sum(claims_beyond_retention)::float8 AS beyond
  FROM parts
 GROUP BY job_type, day
 ORDER BY job_type, day`;

type Range = [number, number];

/** Splits [from, to] into whole days, edge hours and edge minutes (empty ranges are [x, x)). */
export function splitWindow(fromMs: number, toMs: number) {
  const f = Math.floor(fromMs / 60_000) * 60_000;
  const ceil = (ms: number, unit: number) => Math.ceil(ms / unit) * unit;
  const floor = (ms: number, unit: number) => Math.floor(ms / unit) * unit;
  const none = (x: number): Range => [x, x];
  const d1 = ceil(f, DAY_MS);
  const d2 = floor(toMs, DAY_MS);
  if (d1 < d2) {
    const h1 = ceil(f, HOUR_MS);
    const h2 = floor(toMs, HOUR_MS);
    return {
      days: [d1, d2] as Range,
      hoursLeft: [h1, d1] as Range,
      hoursRight: [d2, h2] as Range,
      minutesLeft: [f, h1] as Range,
      minutesRight: [h2, toMs] as Range,
    };
  }
  const h1 = ceil(f, HOUR_MS);
  const h2 = floor(toMs, HOUR_MS);
  if (h1 < h2) {
    return {
      days: none(f),
      hoursLeft: [h1, h2] as Range,
      hoursRight: none(f),
      minutesLeft: [f, h1] as Range,
      minutesRight: [h2, toMs] as Range,
    };
  }
  return { days: none(f), hoursLeft: none(f), hoursRight: none(f), minutesLeft: none(f), minutesRight: [f, toMs] as Range };
}

/** The rollups' gap histograms in [from, to], per job type and UTC day. */
export async function loadGapHistogramDays(
  db: Queryable,
  input: { from: Date; to: Date; jobType?: string | null },
): Promise<GapHistogramDay[]> {
  const w = splitWindow(input.from.getTime(), input.to.getTime());
  const iso = (ms: number) => new Date(ms).toISOString();
  const { rows } = await db.query<Record<string, unknown> & { job_type: string; day: Date; beyond: number }>(GAP_DAYS_SQL, [
    input.jobType ?? null,
    ...[w.days, w.hoursLeft, w.hoursRight, w.minutesLeft, w.minutesRight].flatMap(([a, b]) => [iso(a), iso(b)]),
  ]);
  return rows.map((r) => ({
    jobType: r.job_type,
    day: new Date(r.day).toISOString(),
    buckets: addInto(
      emptyHistogram(),
      Array.from({ length: BUCKET_COUNT }, (_, i) => Number(r[`b${i}`] ?? 0)),
    ),
    claimsBeyondRetention: Number(r.beyond ?? 0),
  }));
}

/** Sums the days into one histogram per job type. */
export function histogramsByJobType(days: GapHistogramDay[]): Map<string, { buckets: number[]; claimsBeyondRetention: number }> {
  const out = new Map<string, { buckets: number[]; claimsBeyondRetention: number }>();
  for (const d of days) {
    let entry = out.get(d.jobType);
    if (!entry) {
      entry = { buckets: emptyHistogram(), claimsBeyondRetention: 0 };
      out.set(d.jobType, entry);
    }
    addInto(entry.buckets, d.buckets);
    entry.claimsBeyondRetention += d.claimsBeyondRetention;
  }
  return out;
}
