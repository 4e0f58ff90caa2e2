import type { Scope } from "../../auth/scope";
import { byEngine, type EffectsSource, effectsStore, type MysqlReader } from "../../console/effects-store";
import type { Series, ViolationSeries } from "./contract";
import { addToViolationLine, type Buckets, bucketIndex, bucketsFor } from "./metrics/series-math";

/** A tenant's suppressions are only counted per hour (tenant_suppressions_hour): no point of theirs is finer. */
export const TENANT_SUPPRESSIONS_STEP_SECONDS = 3600;

/**
 * The buckets one tenant's suppressions are drawn in over [from, to]: the chart's own when they
 * are an hour or coarser (every step from an hour up is a whole number of UTC hours), else whole
 * hours. Placing an hour's count in a ten-minute point would draw one bar an hour and five empty
 * ones between, under an axis saying "per 10 min".
 */
export function tenantSuppressionBuckets(buckets: Buckets, from: Date, to: Date): Buckets {
  return buckets.stepSeconds >= TENANT_SUPPRESSIONS_STEP_SECONDS
    ? buckets
    : bucketsFor(from, to, TENANT_SUPPRESSIONS_STEP_SECONDS);
}

interface GetTenantActivityInput {
  buckets: Buckets;
  /** Where a tenant's suppression series are placed (tenantSuppressionBuckets); default `buckets`. */
  suppressionBuckets?: Buckets;
  jobType?: string | null;
}

interface TenantActivity {
  /** Per tenant over the range (hours overlapping it). */
  totals: Map<string, { suppressions: number; violations: number }>;
  /** Only when a tenant is asked for: its suppressions per job type, an hour's count in the point of suppressionBuckets holding it. */
  suppressions: Series[] | null;
  violations: ViolationSeries[] | null;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

// tenant_suppressions_hour / tenant_violations_hour: rows only where a tenant had an event that
// hour (written by lib/idempotency/rollups.ts); tenant_suppressions_day: their sums per UTC day
// over all job types (kept by a trigger). The range is the hours overlapping [origin, end):
// [$3, $4). One round trip, answered as JSON (one parsed string, not 1,000 result rows).
// Suppressions without ?tenant=: per tenant, summed in SQL from whole days [$5, $6) (totals) and
// apart from the hours at either edge (edges), added up per tenant by the caller (30 days of 1,000
// tenants: 30,000 day rows, not 216,000 hourly ones; with ?jobType= the days are empty and the
// hours do it all). Two aggregates rather than one over a UNION ALL of the three reads: PostgreSQL
// plans that union as a Parallel Append, whose two workers cost more to start than the 30,000
// rows cost to sum (bench:console, 30 d: 12 ms against 7 ms, on 2 cores that the Overview's
// other reads are using at the same moment). With ?tenant=: that tenant's hours per job type, for
// its series. Violations: every row in the range, newest first (they are rare).
// Params: $1 job type or null, $2 tenant or null, $3 first hour, $4 hours end, $5 first whole day,
// $6 days end.
const ACTIVITY_SQL = `
SELECT
  (SELECT coalesce(json_agg(json_build_array(tenant_id, n)), '[]') FROM (
     SELECT tenant_id, sum(count::float8) AS n FROM tenant_suppressions_day
      WHERE $2::text IS NULL AND day >= $5 AND day < $6
      GROUP BY tenant_id) t) AS totals,
  (SELECT coalesce(json_agg(json_build_array(tenant_id, n)), '[]') FROM (
     SELECT tenant_id, sum(count::float8) AS n FROM tenant_suppressions_hour
      WHERE $2::text IS NULL AND ((hour >= $3 AND hour < $5) OR (hour >= $6 AND hour < $4)) AND ($1::text IS NULL OR job_type = $1)
      GROUP BY tenant_id) e) AS edges,
  (SELECT coalesce(json_agg(json_build_array((extract(epoch FROM hour) * 1000)::float8, job_type, count::float8)), '[]')
     FROM tenant_suppressions_hour
    WHERE tenant_id = $2 AND hour >= $3 AND hour < $4 AND ($1::text IS NULL OR job_type = $1)) AS hours,
  (SELECT coalesce(json_agg(v ORDER BY last_seen DESC), '[]') FROM (
     SELECT (extract(epoch FROM hour) * 1000)::float8 AS hour, tenant_id, job_type, constraint_name, count::float8 AS count, last_seen
       FROM tenant_violations_hour
      WHERE hour >= $3 AND hour < $4 AND ($1::text IS NULL OR job_type = $1) AND ($2::text IS NULL OR tenant_id = $2)) v) AS violations`;

/** What either engine answers: per-tenant totals, the asked tenant's hours, the violation hours (newest first). */
interface ActivityRow {
  /** Per tenant; a tenant may come more than once (its whole days, then its edge hours): the counts add up. */
  totals: [string, number][];
  hours: [number, string, number][];
  violations: {
    hour: number;
    tenant_id: string;
    job_type: string;
    constraint_name: string;
    count: number;
    last_seen: string | Date;
  }[];
}

// The same on MySQL, whose rollups keep no day level (PostgreSQL's tenant_suppressions_day is a
// trigger's; the MySQL store writes the hour beside the minute and no more): the totals sum the
// hours of the whole range, the same figures. Three statements at once.
const TOTALS_MYSQL = `
SELECT tenant_id, sum(count) AS n FROM tenant_suppressions_hour
 WHERE hour >= ? AND hour < ? AND (? IS NULL OR job_type = ?)
 GROUP BY tenant_id`;
const HOURS_MYSQL = `
SELECT hour, job_type, count FROM tenant_suppressions_hour
 WHERE tenant_id = ? AND hour >= ? AND hour < ? AND (? IS NULL OR job_type = ?)`;
const VIOLATIONS_MYSQL = `
SELECT hour, tenant_id, job_type, constraint_name, count, last_seen FROM tenant_violations_hour
 WHERE hour >= ? AND hour < ? AND (? IS NULL OR job_type = ?) AND (? IS NULL OR tenant_id = ?)
 ORDER BY last_seen DESC`;

async function readActivityMysql(
  db: MysqlReader,
  input: { jobType: string | null; tenant: string | null; hourFrom: Date; hourTo: Date },
): Promise<ActivityRow> {
  const { jobType, tenant, hourFrom, hourTo } = input;
  const [totals, hours, violations] = await Promise.all([
    tenant === null
      ? db.query<{ tenant_id: string; n: number }>(TOTALS_MYSQL, [hourFrom, hourTo, jobType, jobType])
      : Promise.resolve([]),
    tenant === null
      ? Promise.resolve([])
      : db.query<{ hour: Date; job_type: string; count: number }>(HOURS_MYSQL, [tenant, hourFrom, hourTo, jobType, jobType]),
    db.query<{ hour: Date; tenant_id: string; job_type: string; constraint_name: string; count: number; last_seen: Date }>(
      VIOLATIONS_MYSQL,
      [hourFrom, hourTo, jobType, jobType, tenant, tenant],
    ),
  ]);
  return {
    totals: totals.map((r) => [r.tenant_id, Number(r.n)]),
    hours: hours.map((r) => [r.hour.getTime(), r.job_type, Number(r.count)]),
    violations: violations.map((r) => ({ ...r, hour: r.hour.getTime(), count: Number(r.count) })),
  };
}

/**
 * The hours overlapping [originMs, endMs), and the whole UTC days inside them the day table can
 * answer (none with a job-type filter: the day table sums every job type). Without days, both day
 * bounds sit at the hours' end, so the first edge is every hour and the second is empty.
 */
export function tenantWindows(originMs: number, endMs: number, jobType: string | null) {
  const hourFrom = Math.floor(originMs / HOUR_MS) * HOUR_MS;
  const hourTo = Math.max(hourFrom, Math.ceil(endMs / HOUR_MS) * HOUR_MS);
  const dayFrom = Math.ceil(hourFrom / DAY_MS) * DAY_MS;
  const dayTo = Math.floor(hourTo / DAY_MS) * DAY_MS;
  const days = jobType === null && dayTo > dayFrom;
  return {
    hourFrom: new Date(hourFrom),
    hourTo: new Date(hourTo),
    dayFrom: new Date(days ? dayFrom : hourTo),
    dayTo: new Date(days ? dayTo : hourTo),
  };
}

/** Which tenants had suppressions and uncaught violations in the range. */
export async function getTenantActivity(
  scope: Scope,
  input: GetTenantActivityInput,
  db: EffectsSource = effectsStore(),
): Promise<TenantActivity> {
  const { buckets } = input;
  const n = buckets.timestamps.length;
  const end = new Date(buckets.timestamps[n - 1] ?? buckets.originMs);
  const tenant = scope.tenant;
  const w = tenantWindows(buckets.originMs, end.getTime(), input.jobType ?? null);
  const jobType = input.jobType ?? null;
  const activity = await byEngine(db, {
    postgres: async (pg) => {
      const { rows } = await pg.query<ActivityRow & { edges: [string, number][] }>(ACTIVITY_SQL, [
        jobType,
        tenant,
        w.hourFrom,
        w.hourTo,
        w.dayFrom,
        w.dayTo,
      ]);
      const row = rows[0];
      if (!row) return undefined;
      const { edges, ...rest } = row;
      return { ...rest, totals: row.totals.concat(edges) } satisfies ActivityRow;
    },
    mysql: (my) => readActivityMysql(my, { jobType, tenant, hourFrom: w.hourFrom, hourTo: w.hourTo }),
  });
  if (!activity) throw new Error("the tenant activity query answered no row");

  const totals = new Map<string, { suppressions: number; violations: number }>();
  const total = (tenant: string) => {
    let t = totals.get(tenant);
    if (!t) {
      t = { suppressions: 0, violations: 0 };
      totals.set(tenant, t);
    }
    return t;
  };
  const perTenant = tenant !== null;
  for (const [t, count] of activity.totals) total(t).suppressions += count;
  const hourly = input.suppressionBuckets ?? buckets;
  const suppressionLines = new Map<string, number[]>();
  // Answered only for ?tenant=: that tenant's hours, per job type.
  for (const [hour, jobType, count] of activity.hours) {
    if (tenant === null) break;
    total(tenant).suppressions += count;
    const i = bucketIndex(hourly, Math.max(hour, hourly.originMs));
    if (i < 0) continue;
    let line = suppressionLines.get(jobType);
    if (!line) {
      line = new Array<number>(hourly.timestamps.length).fill(0);
      suppressionLines.set(jobType, line);
    }
    line[i] = (line[i] ?? 0) + count;
  }
  const violationLines = new Map<string, ViolationSeries>();
  for (const r of activity.violations) {
    total(r.tenant_id).violations += r.count;
    if (!perTenant) continue;
    const i = bucketIndex(buckets, Math.max(r.hour, buckets.originMs));
    if (i < 0) continue;
    addToViolationLine(violationLines, r, i, r.count, n);
  }

  return {
    totals,
    suppressions: perTenant
      ? [...suppressionLines].sort(([a], [b]) => a.localeCompare(b)).map(([name, values]) => ({ name, values }))
      : null,
    violations: perTenant ? [...violationLines.values()].sort((a, b) => a.name.localeCompare(b.name)) : null,
  };
}
