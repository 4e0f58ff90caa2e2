import type { Queryable } from "../../../db/types";
import { CLAIM_DURATION_BOUNDS } from "../overview-types";
import { type AlertInputs, alertWindows, LATE_GAP_BUCKET, RollupsSource, type SeriesRows } from "./rollups-source";
import type { Buckets } from "./series-math";
import type { SeriesQuery } from "./source";

/**
 * A rollup level: the minute tables the worker library writes, and the ten-minute, hourly and
 * six-hour sums triggers keep of them. A chart reads the coarsest level whose unit divides its step
 * (the origin is aligned to the step, so each point is whole rows and no range edge is partial):
 * 24 h at 10-minute steps reads 144 rows per job type, 30 d at 6-hour steps 120, 30 d at 3-hour
 * steps (a chart 960 px or wider) 720 hourly ones, never a day of minutes.
 */
interface RollupLevel {
  unitSeconds: number;
  /** One row per unit and job type (the key is (unit, job_type)); the minutes have a row per `marked` too. */
  oneRowPerUnit: boolean;
  stats: string;
  latency: string;
  /** The level's time column. */
  at: string;
}

const ROLLUP_LEVELS: readonly RollupLevel[] = [
  { unitSeconds: 21_600, oneRowPerUnit: true, stats: "worker_stats_6h", latency: "claim_latency_6h", at: "bucket" },
  { unitSeconds: 3600, oneRowPerUnit: true, stats: "worker_stats_hour", latency: "claim_latency_hour", at: "hour" },
  { unitSeconds: 600, oneRowPerUnit: true, stats: "worker_stats_10m", latency: "claim_latency_10m", at: "bucket" },
  { unitSeconds: 60, oneRowPerUnit: false, stats: "worker_stats_minute", latency: "claim_latency_minute", at: "minute" },
];

/** The coarsest level whose unit divides both the step and the origin. */
export function levelFor(buckets: Buckets): RollupLevel {
  const fits = (l: RollupLevel) => buckets.stepSeconds % l.unitSeconds === 0 && buckets.originMs % (l.unitSeconds * 1000) === 0;
  const level = ROLLUP_LEVELS.find(fits);
  if (!level)
    throw new Error(`no rollup level fits a ${buckets.stepSeconds} s step from ${new Date(buckets.originMs).toISOString()}`);
  return level;
}

/**
 * A level's rows in [origin, end), each put in its point by date_bin (a timestamp: cheap to hash)
 * rather than by epoch arithmetic (numeric, on every row).
 * Params: $1 origin, $2 end, $3 job type or null, $4 step s.
 */
const rowsOf = (table: string, at: string, columns: string) => `
  SELECT date_bin(make_interval(secs => $4), ${at}, $1) AS b, job_type, ${columns} FROM ${table}
   WHERE ${at} >= $1 AND ${at} < $2 AND ($3::text IS NULL OR job_type = $3)`;

/** A point's index from its date_bin start (evaluated once per point, not per row). */
const POINT = "(extract(epoch FROM b - $1) / $4)::int";

const SERIES_SQL = new Map(
  ROLLUP_LEVELS.map((l) => [
    l,
    {
      // Per point across job types (claims, in-flight waits, takeovers) and per job type over the
      // range (the table's totals): a few hundred groups, hashed in one pass. float8 sums: a
      // by-value transition state (bigint's is allocated per group), exact below 2^53. job_type
      // NULL marks a point's row, i NULL a job type's.
      stats: `
SELECT job_type, ${POINT} AS i, sum(claims::float8) AS claims, sum(suppressed::float8) AS suppressed,
       sum(in_flight::float8) AS in_flight, sum(takeovers::float8) AS takeovers,
       sum(deliveries::float8) AS deliveries, sum(redeliveries::float8) AS redeliveries
  FROM (${rowsOf(l.stats, l.at, "claims, suppressed, in_flight, takeovers, deliveries, redeliveries")}) s
 GROUP BY GROUPING SETS ((b), (job_type))`,
      // The stacked chart: suppressions per point and job type, only where there are some. A query
      // of its own (in parallel with the others) so its hash carries one sum, not six. One row per
      // job type, its points as JSON ([[i…], [n…]]): one parsed string, not thousands of rows.
      lines: `
SELECT job_type, json_build_array(array_agg(i), array_agg(n)) AS points FROM (
  SELECT ${POINT} AS i, job_type, sum(suppressed::float8) AS n
    FROM (${rowsOf(l.stats, l.at, "suppressed")}) s
   WHERE suppressed > 0
   GROUP BY b, job_type) g
 GROUP BY job_type`,
      // The same when the step is the unit of a level keyed (unit, job_type) (the default widths: 24 h
      // at 10 minutes, 30 d at 6 hours; not the minutes, whose real and marked rows share a minute):
      // each row is already one point of one job type, so the sum per point and job type is the row itself and only the arrays are made: one hash of
      // 50 groups instead of one of 7,200 then one of 50 (bench:console's data, 24 h, server time: 5.5–7 ms
      // against 8–12).
      linesOnePerPoint: `
SELECT job_type, json_build_array(array_agg((extract(epoch FROM ${l.at} - $1) / $4)::int), array_agg(suppressed::float8)) AS points
  FROM ${l.stats}
 WHERE ${l.at} >= $1 AND ${l.at} < $2 AND ($3::text IS NULL OR job_type = $3) AND suppressed > 0
 GROUP BY job_type`,
      // Bucket counts summed element-wise per point, across job types (the chart is one line per
      // quantile): one subscript per bucket, no unnest, one aggregate pass.
      latency: `
SELECT coalesce(json_agg(json_build_array(i, c)), '[]') AS points FROM (
  SELECT ${POINT} AS i,
         ARRAY[${Array.from({ length: CLAIM_DURATION_BOUNDS.length + 1 }, (_, i) => `coalesce(sum(buckets[${i + 1}]::float8), 0)`).join(", ")}] AS c
    FROM (${rowsOf(l.latency, l.at, "buckets")}) s
   GROUP BY b) p`,
    },
  ]),
);

// Violations are rare: the minute table alone, whatever the range. Params: $1 origin, $2 end,
// $3 job type or null, $4 step s.
const VIOLATIONS_SQL = `
SELECT (extract(epoch FROM date_bin(make_interval(secs => $4), minute, $1) - $1) / $4)::int AS b,
       job_type, constraint_name, sum(count)::float8 AS n
  FROM uncaught_violations_minute
 WHERE minute >= $1 AND minute < $2 AND ($3::text IS NULL OR job_type = $3)
 GROUP BY 1, 2, 3`;

// deploy/reconcile-alerts.yml over the tables its gauges are read from (lib/reconciliation/metrics.ts),
// the console's own tables: open findings per provider and kind, with the oldest one's age for the
// ticket's "for: 1h"; and sum by (provider) (increase(onceboard_reconcile_runs_total{status="failed"}[1h])) >= 3.
// Param: $1 now. Beside the rollups' inputs in ALERTS_SQL; alone when the rollups are on MySQL.
const RECONCILIATION_ALERT_COLUMNS = `
  (SELECT coalesce(json_agg(f), '[]') FROM (
     SELECT provider, kind, count(*)::float8 AS n, extract(epoch FROM $1::timestamptz - min(first_seen_at))::float8 AS age
       FROM reconciliation_findings WHERE state = 'open' AND kind <> 'pending' GROUP BY 1, 2) f) AS findings,
  (SELECT coalesce(json_agg(r), '[]') FROM (
     SELECT provider, count(*)::float8 AS n FROM reconciliation_runs
      WHERE status = 'failed' AND finished_at > $1::timestamptz - interval '1 hour' AND finished_at <= $1
      GROUP BY 1 HAVING count(*) >= 3) r) AS failed_runs`;

/** The reconciliation rules' inputs from the console's PostgreSQL (its findings and runs). */
export async function reconciliationAlertInputs(
  db: Queryable,
  now: Date,
): Promise<Pick<AlertInputs, "findings" | "failed_runs">> {
  const { rows } = await db.query<Pick<AlertInputs, "findings" | "failed_runs">>(`SELECT ${RECONCILIATION_ALERT_COLUMNS}`, [now]);
  const row = rows[0];
  if (!row) throw new Error("the reconciliation alerts query answered no row");
  return row;
}

// The four rules' inputs in one round trip (see alerts()). Params: $1 now, $2 10 min ago,
// $3 46 min ago, $4 15 min ago, $5 a day ago, $6 30 min ago (each a whole minute).
const ALERTS_SQL = `
SELECT
  -- sum by (job_type, constraint) (increase(idem_unique_violations_uncaught_total[10m])) > 0
  (SELECT coalesce(json_agg(v), '[]') FROM (
     SELECT job_type, constraint_name, sum(count)::float8 AS n FROM uncaught_violations_minute
      WHERE minute >= $2 AND minute <= $1 GROUP BY 1, 2 HAVING sum(count) > 0) v) AS violations,
  -- redeliveries[30m] > 20 unless suppressions[30m] > 0, for 15m: evaluated at each of the last 16 minutes,
  -- for the job types where it holds now (over (now - 30m, now]; evaluateNotSuppressed skips the
  -- others): a fleet that suppresses sends no minute rows, where it sent 46 per job type.
  (SELECT coalesce(json_agg(r), '[]') FROM (
     SELECT (extract(epoch FROM minute) * 1000)::float8 AS minute, job_type, redeliveries::float8 AS redeliveries, suppressed::float8 AS suppressed
       FROM worker_stats_minute WHERE minute >= $3 AND minute <= $1 AND (redeliveries > 0 OR suppressed > 0)
        AND job_type IN (SELECT job_type FROM worker_stats_minute WHERE minute > $6 AND minute <= $1
                          GROUP BY job_type HAVING sum(redeliveries) > 20 AND sum(suppressed) = 0)) r) AS redeliveries,
  (SELECT coalesce(json_agg(k), '[]') FROM (
     SELECT job_type, sum(key_reuse)::float8 AS n FROM worker_stats_minute
      WHERE minute >= $4 AND minute <= $1 AND key_reuse > 0 GROUP BY 1) k) AS key_reuse,
  -- Gap buckets above 172800 s (1-based index 12 onwards); a minute whose gaps sum below 2 days cannot hold one.
  (SELECT coalesce(json_agg(l), '[]') FROM (
     SELECT job_type, sum((SELECT coalesce(sum(x), 0) FROM unnest(gap_buckets[${LATE_GAP_BUCKET + 1}:]) x))::float8 AS n FROM worker_stats_minute
      WHERE minute >= $5 AND minute <= $1 AND gap_seconds_sum >= 172800 GROUP BY 1
     HAVING sum((SELECT coalesce(sum(x), 0) FROM unnest(gap_buckets[${LATE_GAP_BUCKET + 1}:]) x)) > 0) l) AS late,
  ${RECONCILIATION_ALERT_COLUMNS}`;

/** The rollups in the console's PostgreSQL (the default effects store). */
export class PostgresSource extends RollupsSource {
  readonly name = "postgres" as const;

  constructor(private readonly db: Queryable) {
    super();
  }

  protected async seriesRows({ buckets, jobType }: SeriesQuery): Promise<SeriesRows> {
    const n = buckets.timestamps.length;
    const end = new Date(buckets.timestamps[n - 1] ?? buckets.originMs);
    const origin = new Date(buckets.originMs);
    const level = levelFor(buckets);
    const sql = SERIES_SQL.get(level);
    if (!sql) throw new Error(`no statements for ${level.stats}`);
    const params = [origin, end, jobType, buckets.stepSeconds];
    const [stats, lines, latency, violations] = await Promise.all([
      this.db.query<SeriesRows["stats"][number]>(sql.stats, params),
      this.db.query<SeriesRows["lines"][number]>(
        level.oneRowPerUnit && buckets.stepSeconds === level.unitSeconds ? sql.linesOnePerPoint : sql.lines,
        params,
      ),
      this.db.query<{ points: SeriesRows["latency"] }>(sql.latency, params),
      this.db.query<SeriesRows["violations"][number]>(VIOLATIONS_SQL, params),
    ]);
    return { stats: stats.rows, lines: lines.rows, latency: latency.rows[0]?.points ?? [], violations: violations.rows };
  }

  protected async alertInputs(now: Date): Promise<AlertInputs> {
    const w = alertWindows(now);
    const { rows } = await this.db.query<AlertInputs>(ALERTS_SQL, [
      now,
      w.tenMinutes,
      w.fortySixMinutes,
      w.fifteenMinutes,
      w.day,
      w.thirtyMinutes,
    ]);
    const inputs = rows[0];
    if (!inputs) throw new Error("the alerts query answered no row");
    return inputs;
  }
}
