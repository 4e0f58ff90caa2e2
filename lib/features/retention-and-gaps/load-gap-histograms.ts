import { byEngine, type EffectsSource, type MysqlReader } from "../../console/effects-store";
import type { Queryable } from "../../db/types";
import { addInto, BUCKET_COUNT, emptyHistogram } from "./gap-histogram";

export interface GapHistogramDay {
  jobType: string;
  /** UTC midnight of the day (ISO 8601). */
  day: string;
  buckets: number[];
  claimsBeyondRetention: number;
}

/** One job type's histogram over a window, and its claims beyond retention. */
interface JobTypeHistogram {
  buckets: number[];
  claimsBeyondRetention: number;
}

/** A window's gap histograms: per job type, and (when asked) per UTC day over all job types. */
interface GapHistograms {
  byJobType: Map<string, JobTypeHistogram>;
  /** UTC midnight (ISO 8601) → histogram, ascending by day; empty unless `perDay` was asked. */
  byDay: Map<string, number[]>;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

// Whole UTC days from worker_gaps_day, whole hours at the window's edges from worker_stats_hour,
// minutes at the very edges from worker_stats_minute (the hours kept exact by one trigger on the
// minutes, the days by one on the hours; migration 0004_one_hourly_stats_table): 30 days × 50 job
// types is about 1,500 day rows, at most 2 × 23 × 50 hour rows and 2 × 59 × 50 minute rows, instead
// of 2.16 million minute rows. (The hours alone, 36,000 rows, measured p95 503 ms in bench:gaps.) The
// bucket arrays are summed in SQL, one subscript per bucket (no unnest: no row multiplication),
// into as many rows as the caller needs: one per job type for the advice, one per job type plus
// one per day for the page (GROUPING SETS), one per job type and day for loadGapHistogramDays.
//
// Each part is a list of half-open ranges (unnest) driving one primary-key range scan per range
// (LATERAL, kept a subquery by OFFSET 0). A scan parameterised by an outer row cannot run under a
// Gather, so the plan is serial by construction. It has to be: written as plain ranges the planner
// chose a parallel plan for these ~5,600 rows, and on a busy server starting its two workers cost
// more than the work (EXPLAIN ANALYZE under load: 14 ms of scanning, 195-350 ms in Gather Merge;
// serial median 23-38 ms against 105-132 ms parallel). The right edge is closed (minute <= to):
// its bound is to + 1 µs, exact at timestamptz's microsecond resolution.
const sumBuckets = `ARRAY[${Array.from({ length: BUCKET_COUNT }, (_, i) => `coalesce(sum(gap_buckets[${i + 1}]), 0)`).join(", ")}]::float8[]`;
const part = (table: string, column: string, lows: string[], highs: string[]) => `
  SELECT x.* FROM unnest(ARRAY[${lows.join(", ")}]::timestamptz[], ARRAY[${highs.join(", ")}]::timestamptz[]) AS r(lo, hi)
   CROSS JOIN LATERAL (
     SELECT ${column} AS t, job_type, gap_buckets, claims_beyond_retention
       FROM ${table}
      WHERE ${column} >= r.lo AND ${column} < r.hi AND ($1::text IS NULL OR job_type = $1::text)
        AND (cardinality(gap_buckets) > 0 OR claims_beyond_retention <> 0)
     OFFSET 0) x`;
const PARTS = `
WITH parts AS (${[
  part("worker_gaps_day", "day", ["$2::timestamptz"], ["$3::timestamptz"]),
  part("worker_stats_hour", "hour", ["$4::timestamptz", "$6::timestamptz"], ["$5::timestamptz", "$7::timestamptz"]),
  part(
    "worker_stats_minute",
    "minute",
    ["$8::timestamptz", "$10::timestamptz"],
    ["$9::timestamptz", "$11::timestamptz + interval '1 microsecond'"],
  ),
].join("\n  UNION ALL")}
)`;
const totals = `${sumBuckets} AS buckets, coalesce(sum(claims_beyond_retention), 0)::float8 AS beyond`;

/** Per job type: the advice's input. */
const GAPS_BY_JOB_TYPE_SQL = `${PARTS}
SELECT job_type, NULL::timestamptz AS day, ${totals}
  FROM parts
 GROUP BY job_type
 ORDER BY job_type`;

/** Per job type, and per UTC day over all job types (day IS NULL: a job type's row; job_type IS NULL: a day's). */
const GAPS_BY_JOB_TYPE_OR_DAY_SQL = `${PARTS}
SELECT CASE WHEN grouping(job_type) = 0 THEN job_type END AS job_type,
       date_trunc('day', t, 'UTC') AS day, ${totals}
  FROM parts
 GROUP BY GROUPING SETS ((job_type), (date_trunc('day', t, 'UTC')))
 ORDER BY 1, 2`;

/** Per job type and UTC day. */
const GAPS_BY_JOB_TYPE_AND_DAY_SQL = `${PARTS}
SELECT job_type, date_trunc('day', t, 'UTC') AS day, ${totals}
  FROM parts
 GROUP BY job_type, day
 ORDER BY job_type, day`;

type Range = [number, number];

/** Splits [from, to] into whole days, edge hours and edge minutes (empty ranges are [x, x)). */
function splitWindow(fromMs: number, toMs: number) {
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

interface Row {
  job_type: string | null;
  day: Date | null;
  buckets: (number | null)[];
  beyond: number;
}

async function query(db: Queryable, sql: string, input: { from: Date; to: Date; jobType?: string | null }): Promise<Row[]> {
  const w = splitWindow(input.from.getTime(), input.to.getTime());
  const iso = (ms: number) => new Date(ms).toISOString();
  const { rows } = await db.query<Row & Record<string, unknown>>(sql, [
    input.jobType ?? null,
    ...[w.days, w.hoursLeft, w.hoursRight, w.minutesLeft, w.minutesRight].flatMap(([a, b]) => [iso(a), iso(b)]),
  ]);
  return rows;
}

const histogramOf = (r: Row) =>
  addInto(
    emptyHistogram(),
    r.buckets.map((n) => n ?? 0),
  );

// The same histograms on MySQL, whose rollups keep minutes and hours only (the library's MySQL
// store writes both on each flush; no day level): whole hours from worker_stats_hour, the minutes
// at either edge from worker_stats_minute (the right edge closed: minute <= to), summed per job
// type and UTC day in SQL, element by element of the JSON bucket arrays. The page's per-job-type
// and per-day sums are then made from these rows (summariseDays), the figures PostgreSQL's
// GROUPING SETS give. About 50 job types × 90 days of rows at most.
const GAPS_BY_JOB_TYPE_AND_DAY_MYSQL = `
SELECT job_type, DATE_FORMAT(t, '%Y-%m-%d') AS day,
       ${Array.from({ length: BUCKET_COUNT }, (_, i) => `COALESCE(SUM(JSON_VALUE(gap_buckets, '$[${i}]')), 0) AS b${i}`).join(", ")},
       COALESCE(SUM(claims_beyond_retention), 0) AS beyond
  FROM (
    SELECT hour AS t, job_type, gap_buckets, claims_beyond_retention FROM worker_stats_hour
     WHERE hour >= ? AND hour < ? AND (? IS NULL OR job_type = ?)
       AND (JSON_LENGTH(gap_buckets) > 0 OR claims_beyond_retention <> 0)
    UNION ALL
    SELECT minute, job_type, gap_buckets, claims_beyond_retention FROM worker_stats_minute
     WHERE ((minute >= ? AND minute < ?) OR (minute >= ? AND minute <= ?)) AND (? IS NULL OR job_type = ?)
       AND (JSON_LENGTH(gap_buckets) > 0 OR claims_beyond_retention <> 0)) p
 GROUP BY job_type, day
 ORDER BY job_type, day`;

async function gapDaysMysql(
  db: MysqlReader,
  input: { from: Date; to: Date; jobType?: string | null },
): Promise<GapHistogramDay[]> {
  const f = Math.floor(input.from.getTime() / 60_000) * 60_000;
  const to = input.to.getTime();
  const h1 = Math.ceil(f / HOUR_MS) * HOUR_MS;
  const h2 = Math.floor(to / HOUR_MS) * HOUR_MS;
  // Whole hours [h1, h2) and the minutes [f, h1) and [h2, to]; without a whole hour, the minutes [f, to].
  type Range = [number, number];
  const [hours, left, right]: [Range, Range, Range] =
    h1 < h2
      ? [
          [h1, h2],
          [f, h1],
          [h2, to],
        ]
      : [
          [f, f],
          [f, f],
          [f, to],
        ];
  const jobType = input.jobType ?? null;
  const d = (ms: number) => new Date(ms);
  const rows = await db.query<Record<string, unknown> & { job_type: string; day: string; beyond: number }>(
    GAPS_BY_JOB_TYPE_AND_DAY_MYSQL,
    [d(hours[0]), d(hours[1]), jobType, jobType, d(left[0]), d(left[1]), d(right[0]), d(right[1]), jobType, jobType],
  );
  return rows.map((r) => ({
    jobType: r.job_type,
    day: new Date(`${r.day}T00:00:00.000Z`).toISOString(),
    buckets: addInto(
      emptyHistogram(),
      Array.from({ length: BUCKET_COUNT }, (_, i) => Number(r[`b${i}`] ?? 0)),
    ),
    claimsBeyondRetention: Number(r.beyond),
  }));
}

/**
 * The rollups' gap histograms in [from, to]: one per job type, and with `perDay` one per UTC day
 * over all job types (the page's daily series). One statement; the sums are made in SQL.
 */
export async function loadGapHistograms(
  source: EffectsSource,
  input: { from: Date; to: Date; jobType?: string | null; perDay?: boolean },
): Promise<GapHistograms> {
  return byEngine(source, {
    postgres: (db) => loadGapHistogramsPostgres(db, input),
    mysql: async (db) => {
      const days = summariseDays(await gapDaysMysql(db, input));
      return input.perDay ? days : { byJobType: days.byJobType, byDay: new Map() };
    },
  });
}

async function loadGapHistogramsPostgres(
  db: Queryable,
  input: { from: Date; to: Date; jobType?: string | null; perDay?: boolean },
): Promise<GapHistograms> {
  const rows = await query(db, input.perDay ? GAPS_BY_JOB_TYPE_OR_DAY_SQL : GAPS_BY_JOB_TYPE_SQL, input);
  const byJobType = new Map<string, JobTypeHistogram>();
  const byDay = new Map<string, number[]>();
  for (const r of rows) {
    if (r.job_type !== null) byJobType.set(r.job_type, { buckets: histogramOf(r), claimsBeyondRetention: Number(r.beyond) });
    else if (r.day !== null) byDay.set(new Date(r.day).toISOString(), histogramOf(r));
  }
  return { byJobType, byDay };
}

/** The rollups' gap histograms in [from, to], per job type and UTC day. */
export async function loadGapHistogramDays(
  source: EffectsSource,
  input: { from: Date; to: Date; jobType?: string | null },
): Promise<GapHistogramDay[]> {
  return byEngine(source, {
    postgres: (db) => loadGapHistogramDaysPostgres(db, input),
    mysql: (db) => gapDaysMysql(db, input),
  });
}

async function loadGapHistogramDaysPostgres(
  db: Queryable,
  input: { from: Date; to: Date; jobType?: string | null },
): Promise<GapHistogramDay[]> {
  const rows = await query(db, GAPS_BY_JOB_TYPE_AND_DAY_SQL, input);
  return rows.map((r) => ({
    jobType: r.job_type ?? "",
    day: new Date(r.day ?? 0).toISOString(),
    buckets: histogramOf(r),
    claimsBeyondRetention: Number(r.beyond),
  }));
}

/**
 * Sums per-day histograms into one per job type (in the order they first appear) and one per UTC
 * day over all job types (ascending).
 */
export function summariseDays(days: GapHistogramDay[]): GapHistograms {
  const byJobType = new Map<string, JobTypeHistogram>();
  const byDay = new Map<string, number[]>();
  for (const d of days) {
    let entry = byJobType.get(d.jobType);
    if (!entry) {
      entry = { buckets: emptyHistogram(), claimsBeyondRetention: 0 };
      byJobType.set(d.jobType, entry);
    }
    addInto(entry.buckets, d.buckets);
    entry.claimsBeyondRetention += d.claimsBeyondRetention;
    addInto(byDay.get(d.day) ?? byDay.set(d.day, emptyHistogram()).get(d.day)!, d.buckets);
  }
  return { byJobType, byDay: new Map([...byDay].sort(([a], [b]) => a.localeCompare(b))) };
}

/** Sums the days into one histogram per job type. */
export function histogramsByJobType(days: GapHistogramDay[]): Map<string, JobTypeHistogram> {
  return summariseDays(days).byJobType;
}
