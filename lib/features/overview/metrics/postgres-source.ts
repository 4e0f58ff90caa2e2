import type { Queryable } from "../../../db/types";
import type { AlertStatus, FleetJobTypeActivity, Series, ViolationSeries } from "../contract";
import { CLAIM_DURATION_BOUNDS } from "../overview-types";
import { ALERT_RULES, runbookHref } from "./alert-rules";
import { addToViolationLine, type Buckets, histogramQuantile, notWiredUp, perSecond } from "./series-math";
import type { MetricsSource, SeriesQuery, SourceResult } from "./source";

const HOUR_MS = 3_600_000;

/**
 * A rollup level: the minute tables the worker library writes, and the ten-minute and hourly sums
 * triggers keep of them. A chart reads the coarsest level whose unit divides its step (the origin
 * is aligned to the step, so each point is whole rows): 24 h at 10-minute steps reads 144 rows per
 * job type, 30 d at 6-hour steps 720 hourly ones, never a day of minutes.
 */
interface RollupLevel {
  unitSeconds: number;
  stats: string;
  latency: string;
  /** The level's time column. */
  at: string;
}

const ROLLUP_LEVELS: readonly RollupLevel[] = [
  { unitSeconds: 3600, stats: "worker_stats_hour", latency: "claim_latency_hour", at: "hour" },
  { unitSeconds: 600, stats: "worker_stats_10m", latency: "claim_latency_10m", at: "bucket" },
  { unitSeconds: 60, stats: "worker_stats_minute", latency: "claim_latency_minute", at: "minute" },
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

// The four rules' inputs in one round trip (see alerts()). Params: $1 now, $2 10 min ago,
// $3 46 min ago, $4 15 min ago, $5 a day ago (each a whole minute).
const ALERTS_SQL = `
SELECT
  -- sum by (job_type, constraint) (increase(idem_unique_violations_uncaught_total[10m])) > 0
  (SELECT coalesce(json_agg(v), '[]') FROM (
     SELECT job_type, constraint_name, sum(count)::float8 AS n FROM uncaught_violations_minute
      WHERE minute >= $2 AND minute <= $1 GROUP BY 1, 2 HAVING sum(count) > 0) v) AS violations,
  -- redeliveries[30m] > 20 unless suppressions[30m] > 0, for 15m: evaluated at each of the last 16 minutes.
  (SELECT coalesce(json_agg(r), '[]') FROM (
     SELECT (extract(epoch FROM minute) * 1000)::float8 AS minute, job_type, redeliveries::float8 AS redeliveries, suppressed::float8 AS suppressed
       FROM worker_stats_minute WHERE minute >= $3 AND minute <= $1 AND (redeliveries > 0 OR suppressed > 0)) r) AS redeliveries,
  (SELECT coalesce(json_agg(k), '[]') FROM (
     SELECT job_type, sum(key_reuse)::float8 AS n FROM worker_stats_minute
      WHERE minute >= $4 AND minute <= $1 AND key_reuse > 0 GROUP BY 1) k) AS key_reuse,
  -- Gap buckets above 172800 s (1-based index 12 onwards); a minute whose gaps sum below 2 days cannot hold one.
  (SELECT coalesce(json_agg(l), '[]') FROM (
     SELECT job_type, sum((SELECT coalesce(sum(x), 0) FROM unnest(gap_buckets[12:]) x))::float8 AS n FROM worker_stats_minute
      WHERE minute >= $5 AND minute <= $1 AND gap_seconds_sum >= 172800 GROUP BY 1
     HAVING sum((SELECT coalesce(sum(x), 0) FROM unnest(gap_buckets[12:]) x)) > 0) l) AS late,
  -- deploy/reconcile-alerts.yml over the tables its gauges are read from (lib/reconciliation/metrics.ts):
  -- open findings per provider and kind, with the oldest one's age for the ticket's "for: 1h".
  (SELECT coalesce(json_agg(f), '[]') FROM (
     SELECT provider, kind, count(*)::float8 AS n, extract(epoch FROM $1::timestamptz - min(first_seen_at))::float8 AS age
       FROM reconciliation_findings WHERE state = 'open' AND kind <> 'pending' GROUP BY 1, 2) f) AS findings,
  -- sum by (provider) (increase(onceboard_reconcile_runs_total{status="failed"}[1h])) >= 3
  (SELECT coalesce(json_agg(r), '[]') FROM (
     SELECT provider, count(*)::float8 AS n FROM reconciliation_runs
      WHERE status = 'failed' AND finished_at > $1::timestamptz - interval '1 hour' AND finished_at <= $1
      GROUP BY 1 HAVING count(*) >= 3) r) AS failed_runs`;

const zeros = (n: number) => new Array<number>(n).fill(0);

export class PostgresSource implements MetricsSource {
  readonly name = "postgres" as const;

  constructor(private readonly db: Queryable) {}

  async series({ buckets, jobType }: SeriesQuery): Promise<SourceResult> {
    const n = buckets.timestamps.length;
    const end = new Date(buckets.timestamps[n - 1] ?? buckets.originMs);
    const origin = new Date(buckets.originMs);
    const level = levelFor(buckets);
    const sql = SERIES_SQL.get(level);
    if (!sql) throw new Error(`no statements for ${level.stats}`);
    const params = [origin, end, jobType, buckets.stepSeconds];
    const [stats, lines, latency, violations] = await Promise.all([
      this.db.query<{
        job_type: string | null;
        i: number | null;
        claims: number;
        suppressed: number;
        in_flight: number;
        takeovers: number;
        deliveries: number;
        redeliveries: number;
      }>(sql.stats, params),
      this.db.query<{ job_type: string; points: [number[], number[]] }>(sql.lines, params),
      this.db.query<{ points: [number, number[]][] }>(sql.latency, params),
      this.db.query<{ b: number; job_type: string; constraint_name: string; n: number }>(VIOLATIONS_SQL, params),
    ]);

    const claims = zeros(n);
    const inFlight = zeros(n);
    const takeovers = zeros(n);
    const activity = new Map<string, FleetJobTypeActivity>();
    for (const r of stats.rows) {
      if (r.job_type === null) {
        if (r.i === null || r.i < 0 || r.i >= n) continue;
        claims[r.i] = r.claims;
        inFlight[r.i] = r.in_flight;
        takeovers[r.i] = r.takeovers;
        continue;
      }
      activity.set(r.job_type, {
        jobType: r.job_type,
        deliveries: r.deliveries,
        redeliveries: r.redeliveries,
        suppressions: r.suppressed,
        claims: r.claims,
        uncaughtViolations: 0,
        notWiredUp: false,
      });
    }
    const suppressionSeries: Series[] = lines.rows.map((r) => {
      const values = zeros(n);
      const [points, counts] = r.points;
      points.forEach((i, k) => {
        if (i >= 0 && i < n) values[i] = counts[k] ?? 0;
      });
      return { name: r.job_type, values };
    });

    const histograms: number[][] = Array.from({ length: n }, () => []);
    for (const [i, c] of latency.rows[0]?.points ?? []) if (i >= 0 && i < n) histograms[i] = c;

    const violationLines = new Map<string, ViolationSeries>();
    for (const r of violations.rows) {
      if (r.b < 0 || r.b >= n) continue;
      addToViolationLine(violationLines, r, r.b, r.n, n);
      // From the violations table, like the chart and the tile, so the three always agree.
      const a = activity.get(r.job_type);
      if (a) a.uncaughtViolations += r.n;
      else
        activity.set(r.job_type, {
          jobType: r.job_type,
          deliveries: 0,
          redeliveries: 0,
          suppressions: 0,
          claims: 0,
          uncaughtViolations: r.n,
          notWiredUp: false,
        });
    }

    const jobTypes = [...activity.values()]
      .map((a) => ({ ...a, notWiredUp: notWiredUp(a.redeliveries, a.suppressions) }))
      .sort((a, b) => b.deliveries - a.deliveries || b.claims - a.claims || a.jobType.localeCompare(b.jobType));
    suppressionSeries.sort((a, b) => a.name.localeCompare(b.name));

    return {
      jobTypes,
      series: {
        stepSeconds: buckets.stepSeconds,
        timestamps: buckets.timestamps,
        suppressionBuckets: { stepSeconds: buckets.stepSeconds, timestamps: buckets.timestamps },
        suppressions: suppressionSeries,
        violations: [...violationLines.values()].sort((a, b) => a.name.localeCompare(b.name)),
        claimRate: perSecond(claims, buckets.stepSeconds),
        latencyP50: histograms.map((h) => histogramQuantile(0.5, CLAIM_DURATION_BOUNDS, h)),
        latencyP99: histograms.map((h) => histogramQuantile(0.99, CLAIM_DURATION_BOUNDS, h)),
        inFlight,
        takeovers,
      },
    };
  }

  /** The rules of deploy/alerts.yml evaluated over the minute rollups at `now` (see each rule's comment). */
  async alerts(now: Date): Promise<AlertStatus[]> {
    const minute = (ms: number) => new Date(Math.floor((now.getTime() - ms) / 60_000) * 60_000);
    const { rows } = await this.db.query<{
      violations: { job_type: string; constraint_name: string; n: number }[];
      redeliveries: { minute: number; job_type: string; redeliveries: number; suppressed: number }[];
      key_reuse: { job_type: string; n: number }[];
      late: { job_type: string; n: number }[];
      findings: { provider: string; kind: string; n: number; age: number }[];
      failed_runs: { provider: string; n: number }[];
    }>(ALERTS_SQL, [now, minute(10 * 60_000), minute(46 * 60_000), minute(15 * 60_000), minute(24 * HOUR_MS)]);
    const inputs = rows[0];
    if (!inputs) throw new Error("the alerts query answered no row");

    const notSuppressed = evaluateNotSuppressed(
      inputs.redeliveries.map((r) => ({
        minute: r.minute,
        jobType: r.job_type,
        redeliveries: r.redeliveries,
        suppressed: r.suppressed,
      })),
      now,
    );

    return ALERT_RULES.map((rule) => {
      const base = { name: rule.name, severity: rule.severity, summary: rule.summary, runbook: runbookHref(rule.name) };
      switch (rule.name) {
        case "OnceboardUncaughtUniqueViolation": {
          const instances = inputs.violations.map((r) => ({
            labels: { job_type: r.job_type, constraint: r.constraint_name },
            state: "firing" as const,
            value: r.n,
          }));
          return { ...base, state: instances.length > 0 ? "firing" : "inactive", instances };
        }
        case "OnceboardRedeliveriesNotSuppressed": {
          const state = notSuppressed.some((i) => i.state === "firing")
            ? "firing"
            : notSuppressed.length > 0
              ? "pending"
              : "inactive";
          return { ...base, state, instances: notSuppressed };
        }
        case "OnceboardKeyReuse": {
          const instances = inputs.key_reuse.map((r) => ({
            labels: { job_type: r.job_type },
            state: "firing" as const,
            value: r.n,
          }));
          return { ...base, state: instances.length > 0 ? "firing" : "inactive", instances };
        }
        case "OnceboardLateDuplicates": {
          const instances = inputs.late.map((r) => ({
            labels: { job_type: r.job_type },
            state: "firing" as const,
            value: r.n,
          }));
          return { ...base, state: instances.length > 0 ? "firing" : "inactive", instances };
        }
        case "OnceboardProviderDuplicateCharge": {
          const instances = inputs.findings
            .filter((f) => f.kind === "duplicated_at_provider")
            .map((f) => ({ labels: { provider: f.provider }, state: "firing" as const, value: f.n }));
          return { ...base, state: instances.length > 0 ? "firing" : "inactive", instances };
        }
        case "OnceboardReconcileFindings": {
          // for: 1h — an instance fires once its oldest open finding is an hour old, pending before.
          const instances = inputs.findings
            .filter((f) => f.kind !== "duplicated_at_provider")
            .map((f) => ({
              labels: { provider: f.provider, kind: f.kind },
              state: f.age >= 3600 ? ("firing" as const) : ("pending" as const),
              value: f.n,
            }));
          const state = instances.some((i) => i.state === "firing") ? "firing" : instances.length > 0 ? "pending" : "inactive";
          return { ...base, state, instances };
        }
        case "OnceboardReconcileFailing": {
          const instances = inputs.failed_runs.map((r) => ({
            labels: { provider: r.provider },
            state: "firing" as const,
            value: r.n,
          }));
          return { ...base, state: instances.length > 0 ? "firing" : "inactive", instances };
        }
        default:
          return {
            ...base,
            state: "unknown",
            instances: [],
            note: "Only Prometheus sees this: a failing flush writes no rollup. Set PROMETHEUS_URL to evaluate it.",
          };
      }
    });
  }
}

/**
 * OnceboardRedeliveriesNotSuppressed over minute rollups: at each minute m of the last 16, the
 * condition is redeliveries in (m-30m, m] > 20 and suppressions there = 0. True at every one of
 * them → firing (held for 15 m); true now only → pending.
 */
function evaluateNotSuppressed(
  rows: { minute: number; jobType: string; redeliveries: number; suppressed: number }[],
  now: Date,
): AlertStatus["instances"] {
  const nowMinute = Math.floor(now.getTime() / 60_000) * 60_000;
  const byType = new Map<string, typeof rows>();
  for (const r of rows) {
    const list = byType.get(r.jobType);
    if (list) list.push(r);
    else byType.set(r.jobType, [r]);
  }
  const out: AlertStatus["instances"] = [];
  for (const [jobType, list] of byType) {
    const holds = (m: number) => {
      let redelivered = 0;
      let suppressed = 0;
      for (const r of list) {
        if (r.minute > m - 30 * 60_000 && r.minute <= m) {
          redelivered += r.redeliveries;
          suppressed += r.suppressed;
        }
      }
      return { ok: redelivered > 20 && suppressed === 0, redelivered };
    };
    const current = holds(nowMinute);
    if (!current.ok) continue;
    let held = true;
    for (let k = 1; k <= 15 && held; k++) held = holds(nowMinute - k * 60_000).ok;
    out.push({ labels: { job_type: jobType }, state: held ? "firing" : "pending", value: current.redelivered });
  }
  return out;
}
