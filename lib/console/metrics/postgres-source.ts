import type { Queryable } from "../../db/types";
import type { AlertStatus, JobTypeActivity, Series, ViolationSeries } from "../overview-types";
import { CLAIM_DURATION_BOUNDS } from "../overview-types";
import { ALERT_RULES, runbookHref } from "./alert-rules";
import { type Buckets, histogramQuantile, notWiredUp, perSecond } from "./series-math";
import type { MetricsSource, SeriesQuery, SourceResult } from "./source";

const HOUR_MS = 3_600_000;

/**
 * The minute rows at the edges and the hourly rows in between (when the step is whole hours, so
 * an hour never splits across two points). Three index range scans instead of one over every
 * minute: a 30-day chart reads 720 hourly rows per job type.
 * Params: $1 origin, $2 end, $3 hours from, $4 hours to, $5 job type or null, $6 origin epoch s, $7 step s.
 */
const unionOf = (minuteTable: string, hourTable: string, columns: string) => `
  SELECT minute AS t, job_type, ${columns} FROM ${minuteTable}
   WHERE minute >= $1 AND minute < least($3::timestamptz, $2) AND ($5::text IS NULL OR job_type = $5)
  UNION ALL
  SELECT hour AS t, job_type, ${columns} FROM ${hourTable}
   WHERE hour >= $3 AND hour < $4 AND ($5::text IS NULL OR job_type = $5)
  UNION ALL
  SELECT minute AS t, job_type, ${columns} FROM ${minuteTable}
   WHERE minute >= greatest($4::timestamptz, $1) AND minute < $2 AND ($5::text IS NULL OR job_type = $5)`;

const STATS_SQL = `
SELECT floor((extract(epoch FROM t) - $6) / $7)::int AS b, job_type,
       sum(claims) AS claims, sum(suppressed) AS suppressed, sum(in_flight) AS in_flight, sum(takeovers) AS takeovers,
       sum(deliveries) AS deliveries, sum(redeliveries) AS redeliveries
  FROM (${unionOf("worker_stats_minute", "worker_stats_hour", "claims, suppressed, in_flight, takeovers, deliveries, redeliveries")}) s
 GROUP BY 1, 2`;

// Bucket counts summed element-wise per point, across job types (the chart is one line per
// quantile): one subscript per bucket, no unnest, so a day of minutes is one aggregate pass.
const LATENCY_SQL = `
SELECT floor((extract(epoch FROM t) - $6) / $7)::int AS b,
       ARRAY[${Array.from({ length: CLAIM_DURATION_BOUNDS.length + 1 }, (_, i) => `sum(coalesce(buckets[${i + 1}], 0))`).join(", ")}]::float8[] AS c
  FROM (${unionOf("claim_latency_minute", "claim_latency_hour", "buckets")}) s
 GROUP BY 1`;

// Violations are rare: the minute table alone, whatever the range.
const VIOLATIONS_SQL = `
SELECT floor((extract(epoch FROM minute) - $3) / $4)::int AS b, job_type, constraint_name, sum(count) AS n
  FROM uncaught_violations_minute
 WHERE minute >= $1 AND minute < $2 AND ($5::text IS NULL OR job_type = $5)
 GROUP BY 1, 2, 3`;

type Num = string | number;

/** The hourly range usable for these buckets: whole hours inside [origin, end), or an empty one. */
export function hourWindow(buckets: Buckets): [Date, Date] {
  const end = buckets.timestamps[buckets.timestamps.length - 1] ?? buckets.originMs;
  if (buckets.stepSeconds % 3600 !== 0) return [new Date(end), new Date(end)];
  const from = Math.ceil(buckets.originMs / HOUR_MS) * HOUR_MS;
  const to = Math.floor(end / HOUR_MS) * HOUR_MS;
  return to > from ? [new Date(from), new Date(to)] : [new Date(end), new Date(end)];
}

const zeros = (n: number) => new Array<number>(n).fill(0);

export class PostgresSource implements MetricsSource {
  readonly name = "postgres" as const;

  constructor(private readonly db: Queryable) {}

  async series({ buckets, jobType }: SeriesQuery): Promise<SourceResult> {
    const n = buckets.timestamps.length;
    const end = new Date(buckets.timestamps[n - 1] ?? buckets.originMs);
    const origin = new Date(buckets.originMs);
    const [hFrom, hTo] = hourWindow(buckets);
    const params = [origin, end, hFrom, hTo, jobType, buckets.originMs / 1000, buckets.stepSeconds];
    const [stats, latency, violations] = await Promise.all([
      this.db.query<{
        b: number;
        job_type: string;
        claims: Num;
        suppressed: Num;
        in_flight: Num;
        takeovers: Num;
        deliveries: Num;
        redeliveries: Num;
      }>(STATS_SQL, params),
      this.db.query<{ b: number; c: number[] }>(LATENCY_SQL, params),
      this.db.query<{ b: number; job_type: string; constraint_name: string; n: Num }>(VIOLATIONS_SQL, [
        origin,
        end,
        buckets.originMs / 1000,
        buckets.stepSeconds,
        jobType,
      ]),
    ]);

    const claims = zeros(n);
    const inFlight = zeros(n);
    const takeovers = zeros(n);
    const suppressions = new Map<string, number[]>();
    const activity = new Map<string, JobTypeActivity>();
    for (const r of stats.rows) {
      if (r.b < 0 || r.b >= n) continue;
      claims[r.b] = (claims[r.b] ?? 0) + Number(r.claims);
      inFlight[r.b] = (inFlight[r.b] ?? 0) + Number(r.in_flight);
      takeovers[r.b] = (takeovers[r.b] ?? 0) + Number(r.takeovers);
      let line = suppressions.get(r.job_type);
      if (!line) {
        line = zeros(n);
        suppressions.set(r.job_type, line);
      }
      line[r.b] = (line[r.b] ?? 0) + Number(r.suppressed);
      let a = activity.get(r.job_type);
      if (!a) {
        a = {
          jobType: r.job_type,
          deliveries: 0,
          redeliveries: 0,
          suppressions: 0,
          claims: 0,
          uncaughtViolations: 0,
          notWiredUp: false,
        };
        activity.set(r.job_type, a);
      }
      a.deliveries += Number(r.deliveries);
      a.redeliveries += Number(r.redeliveries);
      a.suppressions += Number(r.suppressed);
      a.claims += Number(r.claims);
    }

    const histograms: number[][] = Array.from({ length: n }, () => []);
    for (const r of latency.rows) if (r.b >= 0 && r.b < n) histograms[r.b] = r.c.map(Number);

    const violationLines = new Map<string, ViolationSeries>();
    for (const r of violations.rows) {
      if (r.b < 0 || r.b >= n) continue;
      const id = `${r.job_type}\u0001${r.constraint_name}`;
      let line = violationLines.get(id);
      if (!line) {
        line = {
          name: `${r.job_type} · ${r.constraint_name}`,
          jobType: r.job_type,
          constraint: r.constraint_name,
          values: zeros(n),
        };
        violationLines.set(id, line);
      }
      line.values[r.b] = (line.values[r.b] ?? 0) + Number(r.n);
      // From the violations table, like the chart and the tile, so the three always agree.
      const a = activity.get(r.job_type);
      if (a) a.uncaughtViolations += Number(r.n);
      else
        activity.set(r.job_type, {
          jobType: r.job_type,
          deliveries: 0,
          redeliveries: 0,
          suppressions: 0,
          claims: 0,
          uncaughtViolations: Number(r.n),
          notWiredUp: false,
        });
    }

    const jobTypes = [...activity.values()]
      .map((a) => ({ ...a, notWiredUp: notWiredUp(a.redeliveries, a.suppressions) }))
      .sort((a, b) => b.deliveries - a.deliveries || b.claims - a.claims || a.jobType.localeCompare(b.jobType));
    const suppressionSeries: Series[] = [...suppressions]
      .filter(([, values]) => values.some((v) => v > 0))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, values]) => ({ name, values }));

    return {
      jobTypes,
      series: {
        stepSeconds: buckets.stepSeconds,
        timestamps: buckets.timestamps,
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
    const [violations, redeliveries, keyReuse, late] = await Promise.all([
      // sum by (job_type, constraint) (increase(idem_unique_violations_uncaught_total[10m])) > 0
      this.db.query<{ job_type: string; constraint_name: string; n: Num }>(
        `SELECT job_type, constraint_name, sum(count) AS n FROM uncaught_violations_minute
          WHERE minute >= $1 AND minute <= $2 GROUP BY 1, 2 HAVING sum(count) > 0`,
        [minute(10 * 60_000), now],
      ),
      // redeliveries[30m] > 20 unless suppressions[30m] > 0, for 15m: evaluated at each of the last 16 minutes.
      this.db.query<{ minute: Date; job_type: string; redeliveries: Num; suppressed: Num }>(
        `SELECT minute, job_type, redeliveries, suppressed FROM worker_stats_minute
          WHERE minute >= $1 AND minute <= $2 AND (redeliveries > 0 OR suppressed > 0)`,
        [minute(46 * 60_000), now],
      ),
      this.db.query<{ job_type: string; n: Num }>(
        `SELECT job_type, sum(key_reuse) AS n FROM worker_stats_minute
          WHERE minute >= $1 AND minute <= $2 AND key_reuse > 0 GROUP BY 1`,
        [minute(15 * 60_000), now],
      ),
      // Gap buckets above 172800 s (1-based index 12 onwards); a minute whose gaps sum below 2 days cannot hold one.
      this.db.query<{ job_type: string; n: Num }>(
        `SELECT job_type, sum((SELECT coalesce(sum(x), 0) FROM unnest(gap_buckets[12:]) x)) AS n FROM worker_stats_minute
          WHERE minute >= $1 AND minute <= $2 AND gap_seconds_sum >= 172800 GROUP BY 1 HAVING sum((SELECT coalesce(sum(x), 0) FROM unnest(gap_buckets[12:]) x)) > 0`,
        [minute(24 * HOUR_MS), now],
      ),
    ]);

    const notSuppressed = evaluateNotSuppressed(
      redeliveries.rows.map((r) => ({
        minute: new Date(r.minute).getTime(),
        jobType: r.job_type,
        redeliveries: Number(r.redeliveries),
        suppressed: Number(r.suppressed),
      })),
      now,
    );

    return ALERT_RULES.map((rule) => {
      const base = { name: rule.name, severity: rule.severity, summary: rule.summary, runbook: runbookHref(rule.name) };
      switch (rule.name) {
        case "OnceboardUncaughtUniqueViolation": {
          const instances = violations.rows.map((r) => ({
            labels: { job_type: r.job_type, constraint: r.constraint_name },
            state: "firing" as const,
            value: Number(r.n),
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
          const instances = keyReuse.rows.map((r) => ({
            labels: { job_type: r.job_type },
            state: "firing" as const,
            value: Number(r.n),
          }));
          return { ...base, state: instances.length > 0 ? "firing" : "inactive", instances };
        }
        case "OnceboardLateDuplicates": {
          const instances = late.rows.map((r) => ({
            labels: { job_type: r.job_type },
            state: "firing" as const,
            value: Number(r.n),
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
export function evaluateNotSuppressed(
  rows: { minute: number; jobType: string; redeliveries: number; suppressed: number }[],
  now: Date,
): AlertStatus["instances"] {
  const nowMinute = Math.floor(now.getTime() / 60_000) * 60_000;
  const byType = new Map<string, typeof rows>();
  for (const r of rows) byType.set(r.jobType, [...(byType.get(r.jobType) ?? []), r]);
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
