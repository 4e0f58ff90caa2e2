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

// Whole hours from worker_gaps_hour (kept exact by triggers on worker_stats_minute, migration
// 20261201040000_gap_hours), the partial hours at the window's two edges from the per-minute rows:
// 30 days × 50 job types is 36,000 hour rows instead of 2.16 million minute rows. One column per
// bucket (gap_buckets[i]) instead of unnest: no row multiplication. Grouped by job type and UTC
// day, so one query feeds both the histograms and the per-day series.
const sumColumns = Array.from({ length: BUCKET_COUNT }, (_, i) => `sum(gap_buckets[${i + 1}])::float8 AS b${i}`).join(", ");
const GAP_DAYS_SQL = `
WITH parts AS (
  SELECT hour AS t, job_type, gap_buckets, claims_beyond_retention
    FROM worker_gaps_hour
   WHERE hour >= $3::timestamptz AND hour < $4::timestamptz AND ($5::text IS NULL OR job_type = $5::text)
  UNION ALL
  SELECT minute, job_type, gap_buckets, claims_beyond_retention
    FROM worker_stats_minute
   WHERE minute >= $1::timestamptz AND minute < $3::timestamptz
     AND ($5::text IS NULL OR job_type = $5::text)
     AND (cardinality(gap_buckets) > 0 OR claims_beyond_retention <> 0)
  UNION ALL
  -- Two plain ranges, not one OR: each is an index range scan on the primary key (minute, job_type).
  SELECT minute, job_type, gap_buckets, claims_beyond_retention
    FROM worker_stats_minute
   WHERE minute >= $4::timestamptz AND minute <= $2::timestamptz
     AND ($5::text IS NULL OR job_type = $5::text)
     AND (cardinality(gap_buckets) > 0 OR claims_beyond_retention <> 0)
)
SELECT job_type, date_trunc('day', t, 'UTC') AS day, ${sumColumns}, sum(claims_beyond_retention)::float8 AS beyond
  FROM parts
 GROUP BY job_type, day
 ORDER BY job_type, day`;

/** The rollups' gap histograms in [from, to], per job type and UTC day. */
export async function loadGapHistogramDays(
  db: Queryable,
  input: { from: Date; to: Date; jobType?: string | null },
): Promise<GapHistogramDay[]> {
  const fromMinute = Math.floor(input.from.getTime() / 60_000) * 60_000;
  let firstHour = Math.ceil(fromMinute / HOUR_MS) * HOUR_MS;
  let endHour = Math.floor(input.to.getTime() / HOUR_MS) * HOUR_MS;
  if (firstHour >= endHour) firstHour = endHour = fromMinute;
  const { rows } = await db.query<Record<string, unknown> & { job_type: string; day: Date; beyond: number }>(GAP_DAYS_SQL, [
    new Date(fromMinute).toISOString(),
    input.to.toISOString(),
    new Date(firstHour).toISOString(),
    new Date(endHour).toISOString(),
    input.jobType ?? null,
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
