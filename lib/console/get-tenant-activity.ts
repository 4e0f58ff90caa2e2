import type { Queryable } from "../db/types";
import { consoleDatabase } from "./database";
import { type Buckets, bucketIndex } from "./metrics/series-math";
import type { Series, ViolationKey, ViolationSeries } from "./overview-types";

export interface GetTenantActivityInput {
  buckets: Buckets;
  jobType?: string | null;
  tenant?: string | null;
}

export interface TenantActivity {
  /** Per tenant over the range (hours overlapping it). */
  totals: Map<string, { suppressions: number; violations: number }>;
  /** Only when a tenant is asked for: its suppressions and violations, an hour's count in the point holding the hour's start. */
  suppressions: Series[] | null;
  violations: ViolationSeries[] | null;
  /** The keys behind uncaught violations (the last key per tenant, job type, constraint and hour), newest first. */
  violationKeys: ViolationKey[];
}

// tenant_suppressions_hour / tenant_violations_hour: rows only where a tenant had an event that
// hour (written by lib/idempotency/rollups.ts). Hours overlapping [origin, end).
// Without ?tenant=: one row per tenant (summed in SQL: 30 days of 1,000 tenants is 200,000 hourly
// rows). With it: that tenant's hours, for its series.
const SUPPRESSIONS_SQL = `
SELECT CASE WHEN $4::text IS NULL THEN NULL ELSE hour END AS hour, tenant_id,
       CASE WHEN $4::text IS NULL THEN '' ELSE job_type END AS job_type, sum(count) AS count
  FROM tenant_suppressions_hour
 WHERE hour >= date_trunc('hour', $1::timestamptz) AND hour < $2
   AND ($3::text IS NULL OR job_type = $3) AND ($4::text IS NULL OR tenant_id = $4)
 GROUP BY 1, 2, 3`;

const VIOLATIONS_SQL = `
SELECT hour, tenant_id, job_type, constraint_name, count, last_key, last_seen FROM tenant_violations_hour
 WHERE hour >= date_trunc('hour', $1::timestamptz) AND hour < $2
   AND ($3::text IS NULL OR job_type = $3) AND ($4::text IS NULL OR tenant_id = $4)
 ORDER BY last_seen DESC`;

/** Which tenants had suppressions and uncaught violations in the range, and the keys involved. */
export async function getTenantActivity(
  input: GetTenantActivityInput,
  db: Queryable = consoleDatabase(),
): Promise<TenantActivity> {
  const { buckets } = input;
  const n = buckets.timestamps.length;
  const end = new Date(buckets.timestamps[n - 1] ?? buckets.originMs);
  const params = [new Date(buckets.originMs), end, input.jobType ?? null, input.tenant ?? null];
  const [suppressions, violations] = await Promise.all([
    db.query<{ hour: Date | null; tenant_id: string; job_type: string; count: string | number }>(SUPPRESSIONS_SQL, params),
    db.query<{
      hour: Date;
      tenant_id: string;
      job_type: string;
      constraint_name: string;
      count: string | number;
      last_key: string;
      last_seen: Date;
    }>(VIOLATIONS_SQL, params),
  ]);

  const totals = new Map<string, { suppressions: number; violations: number }>();
  const total = (tenant: string) => {
    let t = totals.get(tenant);
    if (!t) {
      t = { suppressions: 0, violations: 0 };
      totals.set(tenant, t);
    }
    return t;
  };
  const perTenant = input.tenant != null;
  const suppressionLines = new Map<string, number[]>();
  for (const r of suppressions.rows) {
    total(r.tenant_id).suppressions += Number(r.count);
    if (!perTenant || r.hour === null) continue;
    const i = bucketIndex(buckets, Math.max(new Date(r.hour).getTime(), buckets.originMs));
    if (i < 0) continue;
    let line = suppressionLines.get(r.job_type);
    if (!line) {
      line = new Array<number>(n).fill(0);
      suppressionLines.set(r.job_type, line);
    }
    line[i] = (line[i] ?? 0) + Number(r.count);
  }
  const violationLines = new Map<string, ViolationSeries>();
  const violationKeys: ViolationKey[] = [];
  for (const r of violations.rows) {
    total(r.tenant_id).violations += Number(r.count);
    violationKeys.push({
      tenant: r.tenant_id,
      jobType: r.job_type,
      constraint: r.constraint_name,
      count: Number(r.count),
      lastKey: r.last_key,
      lastSeen: new Date(r.last_seen).toISOString(),
    });
    if (!perTenant) continue;
    const i = bucketIndex(buckets, Math.max(new Date(r.hour).getTime(), buckets.originMs));
    if (i < 0) continue;
    const id = `${r.job_type}\u0001${r.constraint_name}`;
    let line = violationLines.get(id);
    if (!line) {
      line = {
        name: `${r.job_type} · ${r.constraint_name}`,
        jobType: r.job_type,
        constraint: r.constraint_name,
        values: new Array<number>(n).fill(0),
      };
      violationLines.set(id, line);
    }
    line.values[i] = (line.values[i] ?? 0) + Number(r.count);
  }

  return {
    totals,
    suppressions: perTenant
      ? [...suppressionLines].sort(([a], [b]) => a.localeCompare(b)).map(([name, values]) => ({ name, values }))
      : null,
    violations: perTenant ? [...violationLines.values()].sort((a, b) => a.name.localeCompare(b.name)) : null,
    violationKeys: violationKeys.slice(0, 50),
  };
}
