import type { Scope } from "../auth/scope";
import type { Queryable } from "../db/types";
import { consoleDatabase } from "./database";
import { getStuckClaims } from "./get-stuck-claims";
import { getTenantActivity } from "./get-tenant-activity";
import { getViolationGroups } from "./get-violation-groups";
import { metricsSource } from "./metrics";
import { bucketsFor, chooseStep, rankTenants } from "./metrics/series-math";
import type { MetricsSource } from "./metrics/source";
import { type OverviewQuery, resolveRange } from "./overview-query";
import type { OverviewResponse, TenantRow } from "./overview-types";

export interface GetOverviewSeriesDeps {
  db?: Queryable;
  /** The metrics source; defaults to the configured one (lib/console/metrics). */
  source?: MetricsSource;
  now?: Date;
}

const sum = (values: (number | null)[]) => values.reduce<number>((a, b) => a + (b ?? 0), 0);

/**
 * The on-call Overview's question: over this range (and job type, and tenant), is it rising, which
 * tenant, what is stuck, what is firing? Charts from the configured metrics source; tenants,
 * stuck claims and violation groups from PostgreSQL (the metrics carry no tenant), for the scope's
 * tenant only: a tenant scope reads its own tenant whatever `query.tenant` says; a platform scope
 * narrows to `query.tenant`, or reads every tenant.
 */
export async function getOverviewSeries(
  requested: Scope,
  query: OverviewQuery,
  deps: GetOverviewSeriesDeps = {},
): Promise<OverviewResponse> {
  const scope = requested.narrow(query.tenant);
  const db = deps.db ?? consoleDatabase();
  const source = deps.source ?? metricsSource(db);
  const now = deps.now ?? new Date();
  const { range, from, to } = resolveRange(query, now);
  const step = chooseStep((to.getTime() - from.getTime()) / 1000, query.width);
  const buckets = bucketsFor(from, to, step);
  const jobType = query.jobType ?? null;
  const tenant = scope.tenant;

  const [result, tenants, stuck, alerts, violationGroups] = await Promise.all([
    source.series({ buckets, jobType }),
    getTenantActivity(scope, { buckets, jobType }, db),
    getStuckClaims(scope, { jobType, now }, db),
    source.alerts(now),
    getViolationGroups(scope, { jobType, from, to }, db),
  ]);

  const series = { ...result.series };
  const notes: string[] = [];
  const tenantScoped = ["topTenants", "stuck", "violationGroups"];
  if (tenant !== null) {
    series.suppressions = tenants.suppressions ?? [];
    series.violations = tenants.violations ?? [];
    tenantScoped.push("series.suppressions", "series.violations", "totals.suppressions", "totals.uncaughtViolations");
    notes.push(
      `Suppressions and violations are ${tenant}'s, counted per hour (an hour's count sits at the point holding its start). ` +
        "Claims, latency, deliveries and the job-type table are for every tenant: the per-minute rollups carry no tenant.",
    );
  }

  const rows = new Map<string, TenantRow>();
  for (const [t, v] of tenants.totals)
    rows.set(t, { tenant: t, suppressions: v.suppressions, violations: v.violations, stuck: 0 });
  for (const [t, n] of stuck.byTenant) {
    const row = rows.get(t) ?? { tenant: t, suppressions: 0, violations: 0, stuck: 0 };
    row.stuck = n;
    rows.set(t, row);
  }

  const totals = {
    deliveries: result.jobTypes.reduce((a, j) => a + j.deliveries, 0),
    redeliveries: result.jobTypes.reduce((a, j) => a + j.redeliveries, 0),
    claims: result.jobTypes.reduce((a, j) => a + j.claims, 0),
    suppressions: series.suppressions.reduce((a, s) => a + sum(s.values), 0),
    uncaughtViolations: series.violations.reduce((a, s) => a + sum(s.values), 0),
    stuck: stuck.total,
  };
  if (source.name === "prometheus")
    notes.push(
      "Charts come from Prometheus (increase() over each step, extrapolated): totals can differ from the rollups by a scrape interval's events.",
    );

  return {
    source: source.name,
    alertsSource: source.name,
    range,
    from: new Date(buckets.originMs).toISOString(),
    to: new Date(buckets.timestamps[buckets.timestamps.length - 1] ?? buckets.originMs).toISOString(),
    jobType,
    tenant,
    series,
    tenantScoped,
    jobTypes: result.jobTypes,
    topTenants: rankTenants([...rows.values()]),
    stuck: stuck.claims,
    violationGroups,
    alerts,
    totals,
    notes,
  };
}
