import type { Scope } from "../auth/scope";
import type { Queryable } from "../db/types";
import { consoleDatabase } from "./database";
import { getStuckClaims } from "./get-stuck-claims";
import { getTenantActivity } from "./get-tenant-activity";
import { getViolationGroups } from "./get-violation-groups";
import { isKnownJobType } from "./job-type-known";
import { metricsSource } from "./metrics";
import { bucketsFor, chooseStep, rankTenants } from "./metrics/series-math";
import type { MetricsSource } from "./metrics/source";
import { type OverviewQuery, resolveRange } from "./overview-query";
import type { AlertStatus, JobTypeActivity, OverviewResponse, TenantRow } from "./overview-types";

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

  const [result, tenants, stuck, fleetAlerts, violationGroups, jobTypeKnown] = await Promise.all([
    source.series({ buckets, jobType }),
    getTenantActivity(scope, { buckets, jobType }, db),
    getStuckClaims(scope, { jobType, now }, db),
    source.alerts(now),
    getViolationGroups(scope, { jobType, from, to }, db),
    jobType === null ? true : isKnownJobType(db, jobType),
  ]);
  const alerts = alertsForJobType(fleetAlerts, jobType);

  const series = { ...result.series };
  const notes: string[] = [];
  const tenantScoped = ["topTenants", "stuck", "violationGroups"];
  let jobTypes = result.jobTypes;
  if (tenant !== null) {
    series.suppressions = tenants.suppressions ?? [];
    series.violations = tenants.violations ?? [];
    jobTypes = withTenantCounts(result.jobTypes, series.suppressions, series.violations);
    tenantScoped.push(
      "series.suppressions",
      "series.violations",
      "totals.suppressions",
      "totals.uncaughtViolations",
      "jobTypes.suppressions",
      "jobTypes.uncaughtViolations",
    );
    notes.push(
      `Suppressions and violations are ${tenant}'s, counted per hour (an hour's count sits at the point holding its start). ` +
        "Deliveries, redeliveries, claims, latency, waits and the alerts are for every tenant (each says so): the per-minute rollups and the alert rules carry no tenant.",
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
    deliveries: jobTypes.reduce((a, j) => a + j.deliveries, 0),
    redeliveries: jobTypes.reduce((a, j) => a + j.redeliveries, 0),
    claims: jobTypes.reduce((a, j) => a + j.claims, 0),
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
    jobTypeKnown,
    tenant,
    series,
    tenantScoped,
    jobTypes,
    topTenants: rankTenants([...rows.values()]),
    stuck: stuck.claims,
    violationGroups,
    alerts,
    totals,
    notes,
  };
}

/**
 * The job-type table for one tenant: its own suppressions and uncaught violations per job type
 * (the hourly per-tenant tables); deliveries, redeliveries and claims stay every tenant's.
 */
function withTenantCounts(
  fleet: JobTypeActivity[],
  suppressions: { name: string; values: (number | null)[] }[],
  violations: { jobType: string; values: (number | null)[] }[],
): JobTypeActivity[] {
  const suppressed = new Map<string, number>();
  for (const line of suppressions) suppressed.set(line.name, (suppressed.get(line.name) ?? 0) + sum(line.values));
  const uncaught = new Map<string, number>();
  for (const line of violations) uncaught.set(line.jobType, (uncaught.get(line.jobType) ?? 0) + sum(line.values));
  return fleet.map((j) => ({
    ...j,
    suppressions: suppressed.get(j.jobType) ?? 0,
    uncaughtViolations: uncaught.get(j.jobType) ?? 0,
  }));
}

/**
 * The alerts as they stand for one job type: instances labelled with another job type are left
 * out, and an alert firing only for others is inactive here, saying for which it fires.
 */
export function alertsForJobType(alerts: AlertStatus[], jobType: string | null): AlertStatus[] {
  if (jobType === null) return alerts;
  return alerts.map((alert) => {
    const mine = alert.instances.filter((i) => i.labels.job_type === undefined || i.labels.job_type === jobType);
    if (mine.length === alert.instances.length) return alert;
    const others = [...new Set(alert.instances.filter((i) => !mine.includes(i)).map((i) => i.labels.job_type))].sort();
    const state = mine.some((i) => i.state === "firing")
      ? "firing"
      : mine.some((i) => i.state === "pending")
        ? "pending"
        : "inactive";
    return {
      ...alert,
      state,
      instances: mine,
      ...(mine.length === 0 ? { note: `Not for ${jobType}; ${alert.state} for ${others.join(", ")}.` } : {}),
    };
  });
}
