import type { MysqlReader } from "../../../console/effects-store";
import type { Queryable } from "../../../db/types";
import { GAP_BUCKET_BOUNDS } from "../../../idempotency/admin";
import { CLAIM_DURATION_BOUNDS } from "../overview-types";
import { reconciliationAlertInputs } from "./postgres-source";
import { type AlertInputs, alertWindows, LATE_GAP_BUCKET, RollupsSource, type SeriesRows } from "./rollups-source";
import type { Buckets } from "./series-math";
import type { SeriesQuery } from "./source";

/**
 * The rollups on a MySQL or MariaDB effects store. The library's MySQL store writes each flush to
 * the minute and the hour tables (no trigger there keeps the 10-minute and day levels PostgreSQL
 * has), so a chart reads the hours when its step and origin are whole hours, else the minutes.
 */
const MYSQL_LEVELS = [
  { unitSeconds: 3600, stats: "worker_stats_hour", latency: "claim_latency_hour", at: "hour" },
  { unitSeconds: 60, stats: "worker_stats_minute", latency: "claim_latency_minute", at: "minute" },
] as const;

type MysqlLevel = (typeof MYSQL_LEVELS)[number];

function mysqlLevelFor(buckets: Buckets): MysqlLevel {
  const level = MYSQL_LEVELS.find(
    (l) => buckets.stepSeconds % l.unitSeconds === 0 && buckets.originMs % (l.unitSeconds * 1000) === 0,
  );
  if (!level)
    throw new Error(`no rollup level fits a ${buckets.stepSeconds} s step from ${new Date(buckets.originMs).toISOString()}`);
  return level;
}

// A row's point: the whole steps from the origin (an aligned level's rows never straddle one).
// Every statement below takes (origin, step) for its point, then (origin, end, job type, job type).
const point = (at: string) => `FLOOR(TIMESTAMPDIFF(SECOND, ?, ${at}) / ?)`;
const inRange = (at: string) => `${at} >= ? AND ${at} < ? AND (? IS NULL OR job_type = ?)`;

// The points' rows and the job types' rows in one statement, as PostgreSQL's GROUPING SETS gives them.
const statsSql = (l: MysqlLevel) => `
SELECT NULL AS job_type, ${point(l.at)} AS i, SUM(claims) AS claims, SUM(suppressed) AS suppressed, SUM(in_flight) AS in_flight,
       SUM(takeovers) AS takeovers, SUM(deliveries) AS deliveries, SUM(redeliveries) AS redeliveries
  FROM ${l.stats} WHERE ${inRange(l.at)} GROUP BY i
UNION ALL
SELECT job_type, NULL, SUM(claims), SUM(suppressed), SUM(in_flight), SUM(takeovers), SUM(deliveries), SUM(redeliveries)
  FROM ${l.stats} WHERE ${inRange(l.at)} GROUP BY job_type`;

const linesSql = (l: MysqlLevel) => `
SELECT job_type, ${point(l.at)} AS i, SUM(suppressed) AS n
  FROM ${l.stats} WHERE ${inRange(l.at)} AND suppressed > 0
 GROUP BY job_type, i`;

// The bucket counts are JSON arrays: each element summed across the point's rows.
const latencySql = (l: MysqlLevel) => `
SELECT ${point(l.at)} AS i,
       ${Array.from({ length: CLAIM_DURATION_BOUNDS.length + 1 }, (_, k) => `COALESCE(SUM(JSON_VALUE(buckets, '$[${k}]')), 0) AS c${k}`).join(", ")}
  FROM ${l.latency} WHERE ${inRange(l.at)}
 GROUP BY i`;

// Violations are rare: the minute table alone, whatever the range.
const VIOLATIONS_MYSQL = `
SELECT ${point("minute")} AS b, job_type, constraint_name, SUM(count) AS n
  FROM uncaught_violations_minute WHERE ${inRange("minute")}
 GROUP BY b, job_type, constraint_name`;

// The rollups' four rule inputs, as PostgreSQL's ALERTS_SQL reads them (postgres-source.ts).
const ALERT_VIOLATIONS_MYSQL = `
SELECT job_type, constraint_name, SUM(count) AS n FROM uncaught_violations_minute
 WHERE minute >= ? AND minute <= ? GROUP BY job_type, constraint_name HAVING SUM(count) > 0`;
const ALERT_REDELIVERIES_MYSQL = `
SELECT minute, job_type, redeliveries, suppressed FROM worker_stats_minute
 WHERE minute >= ? AND minute <= ? AND (redeliveries > 0 OR suppressed > 0)`;
const ALERT_KEY_REUSE_MYSQL = `
SELECT job_type, SUM(key_reuse) AS n FROM worker_stats_minute
 WHERE minute >= ? AND minute <= ? AND key_reuse > 0 GROUP BY job_type`;
const lateBuckets = Array.from(
  { length: GAP_BUCKET_BOUNDS.length + 1 - LATE_GAP_BUCKET },
  (_, k) => `COALESCE(JSON_VALUE(gap_buckets, '$[${LATE_GAP_BUCKET + k}]'), 0)`,
).join(" + ");
const ALERT_LATE_MYSQL = `
SELECT job_type, SUM(${lateBuckets}) AS n FROM worker_stats_minute
 WHERE minute >= ? AND minute <= ? AND gap_seconds_sum >= 172800 GROUP BY job_type HAVING SUM(${lateBuckets}) > 0`;

const num = (value: unknown) => Number(value ?? 0);

/** The rollups of a MySQL effects store; reconciliation's alert inputs from the console's PostgreSQL. */
export class MysqlSource extends RollupsSource {
  readonly name = "mysql" as const;

  constructor(
    private readonly db: MysqlReader,
    /** The console's PostgreSQL: its reconciliation findings and runs. */
    private readonly consoleDb: Queryable,
  ) {
    super();
  }

  protected async seriesRows({ buckets, jobType }: SeriesQuery): Promise<SeriesRows> {
    const n = buckets.timestamps.length;
    const origin = new Date(buckets.originMs);
    const end = new Date(buckets.timestamps[n - 1] ?? buckets.originMs);
    const level = mysqlLevelFor(buckets);
    const params = [origin, buckets.stepSeconds, origin, end, jobType, jobType];
    const [stats, lines, latency, violations] = await Promise.all([
      this.db.query<Record<string, unknown>>(statsSql(level), [...params, origin, end, jobType, jobType]),
      this.db.query<{ job_type: string; i: number; n: number }>(linesSql(level), params),
      this.db.query<Record<string, unknown>>(latencySql(level), params),
      this.db.query<{ b: number; job_type: string; constraint_name: string; n: number }>(VIOLATIONS_MYSQL, params),
    ]);
    const byJobType = new Map<string, [number[], number[]]>();
    for (const r of lines) {
      const points = byJobType.get(r.job_type) ?? [[], []];
      points[0].push(num(r.i));
      points[1].push(num(r.n));
      byJobType.set(r.job_type, points);
    }
    return {
      stats: stats.map((r) => ({
        job_type: (r.job_type as string | null) ?? null,
        i: r.i === null ? null : num(r.i),
        claims: num(r.claims),
        suppressed: num(r.suppressed),
        in_flight: num(r.in_flight),
        takeovers: num(r.takeovers),
        deliveries: num(r.deliveries),
        redeliveries: num(r.redeliveries),
      })),
      lines: [...byJobType].map(([job_type, points]) => ({ job_type, points })),
      latency: latency.map((r) => [
        num(r.i),
        Array.from({ length: CLAIM_DURATION_BOUNDS.length + 1 }, (_, k) => num(r[`c${k}`])),
      ]),
      violations: violations.map((r) => ({ ...r, b: num(r.b), n: num(r.n) })),
    };
  }

  protected async alertInputs(now: Date): Promise<AlertInputs> {
    const w = alertWindows(now);
    const [violations, redeliveries, keyReuse, late, reconciliation] = await Promise.all([
      this.db.query<{ job_type: string; constraint_name: string; n: number }>(ALERT_VIOLATIONS_MYSQL, [w.tenMinutes, now]),
      this.db.query<{ minute: Date; job_type: string; redeliveries: number; suppressed: number }>(ALERT_REDELIVERIES_MYSQL, [
        w.fortySixMinutes,
        now,
      ]),
      this.db.query<{ job_type: string; n: number }>(ALERT_KEY_REUSE_MYSQL, [w.fifteenMinutes, now]),
      this.db.query<{ job_type: string; n: number }>(ALERT_LATE_MYSQL, [w.day, now]),
      reconciliationAlertInputs(this.consoleDb, now),
    ]);
    return {
      violations: violations.map((r) => ({ ...r, n: num(r.n) })),
      redeliveries: redeliveries.map((r) => ({
        minute: r.minute.getTime(),
        job_type: r.job_type,
        redeliveries: num(r.redeliveries),
        suppressed: num(r.suppressed),
      })),
      key_reuse: keyReuse.map((r) => ({ ...r, n: num(r.n) })),
      late: late.map((r) => ({ ...r, n: num(r.n) })),
      ...reconciliation,
    };
  }
}
