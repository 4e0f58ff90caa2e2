import type { Scope } from "../../auth/scope";
import { type EffectsSource, effectsStore } from "../../console/effects-store";
import { formatCount, formatDuration } from "../../format";
import { getViolationGroups } from "../violations/get-violation-groups";
import type { AlertStatus, JobTypeActivity, OverviewResponse, TenantRow } from "./contract";
import { getStuckClaims } from "./get-stuck-claims";
import { getTenantActivity, tenantSuppressionBuckets } from "./get-tenant-activity";
import { bucketWindow, getUnflushedWorkers, getViolationCounts } from "./get-violation-counts";
import { isKnownJobType } from "./job-type-known";
import { metricsSource } from "./metrics";
import { bucketsFor, chooseStep, rankTenants } from "./metrics/series-math";
import type { MetricsSource } from "./metrics/source";
import { type OverviewQuery, resolveRange } from "./overview-query";

interface GetOverviewSeriesDeps {
  /** The effects store (its rollups, violations, stuck claims, tenant counters). */
  db?: EffectsSource;
  /** The metrics source; defaults to the configured one (lib/console/metrics). */
  source?: MetricsSource;
  now?: Date;
}

const sum = (values: (number | null)[]) => values.reduce<number>((a, b) => a + (b ?? 0), 0);

/**
 * The on-call Overview's question: over this range (and job type, and tenant), is it rising, which
 * tenant, what is stuck, what is firing? Charts from the configured metrics source; tenants,
 * stuck claims and violation groups from the effects store (the metrics carry no tenant), for the scope's
 * tenant only: a tenant scope reads its own tenant whatever `query.tenant` says; a platform scope
 * narrows to `query.tenant`, or reads every tenant.
 */
export async function getOverviewSeries(
  requested: Scope,
  query: OverviewQuery,
  deps: GetOverviewSeriesDeps = {},
): Promise<OverviewResponse> {
  const scope = requested.narrow(query.tenant);
  const db = deps.db ?? effectsStore();
  const source = deps.source ?? metricsSource(db);
  const now = deps.now ?? new Date();
  const { range, from, to } = resolveRange(query, now);
  const step = chooseStep((to.getTime() - from.getTime()) / 1000, query.width);
  const buckets = bucketsFor(from, to, step);
  const jobType = query.jobType ?? null;
  const tenant = scope.tenant;
  const suppressionBuckets = tenant === null ? buckets : tenantSuppressionBuckets(buckets, from, to);

  // Every violation figure (banner, tiles, chart, job types, tenants) counts the durable rows over
  // the buckets' span, so they agree with each other and with the Violations list of that window.
  const window = bucketWindow(buckets);
  const [result, tenants, stuck, fleetAlerts, violationGroups, jobTypeKnown, violations, unflushed] = await Promise.all([
    source.series({ buckets, jobType }),
    getTenantActivity(scope, { buckets, suppressionBuckets, jobType }, db),
    getStuckClaims(scope, { jobType, now }, db),
    source.alerts(now),
    getViolationGroups(scope, { jobType, from: window.from, to: window.to }, db),
    jobType === null ? true : isKnownJobType(db, jobType),
    getViolationCounts(scope, { buckets, jobType }, db),
    getUnflushedWorkers({ ...window, now }, db),
  ]);
  // A tenant session sees no figure that only exists for every tenant (the rollups, the alert
  // rules and the claim charts carry no tenant): withheld, and the response says which.
  const tenantSession = !requested.platform;
  const alerts = tenantSession ? [] : alertsForJobType(fleetAlerts, jobType);

  const rollupViolations = result.series.violations.reduce((a, s) => a + sum(s.values), 0);
  const series = { ...result.series, violations: violations.series };
  const notes: string[] = [];
  const tenantScoped = [
    "topTenants",
    "stuck",
    "violationGroups",
    "series.violations",
    "totals.uncaughtViolations",
    "jobTypes.uncaughtViolations",
  ];
  let jobTypes = withDurableViolations(result.jobTypes, violations.byJobType);
  if (tenant !== null) {
    series.suppressions = tenants.suppressions ?? [];
    series.suppressionBuckets = { stepSeconds: suppressionBuckets.stepSeconds, timestamps: suppressionBuckets.timestamps };
    jobTypes = withTenantCounts(jobTypes, series.suppressions);
    tenantScoped.push("series.suppressions", "totals.suppressions", "jobTypes.suppressions");
    const counted =
      suppressionBuckets === buckets
        ? `Suppressions are ${tenant}'s, counted per hour; violations are ${tenant}'s, one by one. `
        : `Suppressions are ${tenant}'s, counted per hour (so their chart has a point per hour, the others one per ${formatDuration(step)}); violations are ${tenant}'s, one by one. `;
    notes.push(
      tenantSession
        ? counted +
            "Deliveries, redeliveries, claims, claim rate, latency, waits and the alerts are not shown: they are only counted for every tenant (the per-minute rollups and the alert rules carry no tenant)."
        : counted +
            "Deliveries, redeliveries, claims, latency, waits and the alerts are for every tenant (each says so): the per-minute rollups and the alert rules carry no tenant.",
    );
  }
  const withheld = tenantSession ? [...TENANT_WITHHELD] : [];
  if (tenantSession) {
    const none = () => buckets.timestamps.map(() => null);
    series.claimRate = none();
    series.latencyP50 = none();
    series.latencyP99 = none();
    series.inFlight = none();
    series.takeovers = none();
    jobTypes = jobTypes.map((j) => ({ ...j, deliveries: null, redeliveries: null, claims: null }));
  }

  // The rollups' figures are what workers flushed: one killed between flushes took its counts
  // since the last flush with it. Its registration lapsed; a violation it hit has its row but is
  // missing from the rollup, which measures part of what was lost.
  const violationsMissing = tenant === null ? Math.max(0, violations.total - rollupViolations) : null;
  if (unflushed.workers > 0 || (violationsMissing ?? 0) > 0)
    notes.push(unflushedNote(unflushed.workers, unflushed.lastHeartbeat, violationsMissing, violations.total));

  const rows = new Map<string, TenantRow>();
  for (const [t, v] of tenants.totals) rows.set(t, { tenant: t, suppressions: v.suppressions, violations: 0, stuck: 0 });
  for (const [t, n] of violations.byTenant) {
    const row = rows.get(t) ?? { tenant: t, suppressions: 0, violations: 0, stuck: 0 };
    row.violations = n;
    rows.set(t, row);
  }
  for (const [t, n] of stuck.byTenant) {
    const row = rows.get(t) ?? { tenant: t, suppressions: 0, violations: 0, stuck: 0 };
    row.stuck = n;
    rows.set(t, row);
  }

  const totals = {
    deliveries: tenantSession ? null : sum(jobTypes.map((j) => j.deliveries)),
    redeliveries: tenantSession ? null : sum(jobTypes.map((j) => j.redeliveries)),
    claims: tenantSession ? null : sum(jobTypes.map((j) => j.claims)),
    suppressions: series.suppressions.reduce((a, s) => a + sum(s.values), 0),
    uncaughtViolations: violations.total,
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
    withheld,
    unflushed: {
      workers: unflushed.workers,
      lastHeartbeat: unflushed.lastHeartbeat?.toISOString() ?? null,
      violationsMissingFromRollups: violationsMissing,
    },
  };
}

/** What a tenant session is not shown on the Overview (OverviewResponse.withheld). */
const TENANT_WITHHELD = [
  "totals.deliveries",
  "totals.redeliveries",
  "totals.claims",
  "jobTypes.deliveries",
  "jobTypes.redeliveries",
  "jobTypes.claims",
  "series.claimRate",
  "series.latency",
  "series.waits",
  "alerts",
] as const;

/** The sentence saying what the rollup figures may be missing, from what the database recorded. */
function unflushedNote(
  workers: number,
  lastHeartbeat: Date | null,
  violationsMissing: number | null,
  violations: number,
): string {
  const parts: string[] = [];
  if (workers > 0)
    parts.push(
      `${workers === 1 ? "1 worker" : `${workers} workers`} stopped without a clean shutdown in this range` +
        `${lastHeartbeat ? ` (the last one's final heartbeat at ${lastHeartbeat.toISOString().slice(0, 19).replace("T", " ")} UTC)` : ""}: ` +
        "each lost what it had counted since its last flush (up to one flushInterval of its work), so deliveries, redeliveries, claims, suppressions, latency and waits may be short by that much.",
    );
  if (violationsMissing !== null && violationsMissing > 0)
    parts.push(
      `The rollups hold ${formatCount(violationsMissing)} fewer uncaught violations than the ${formatCount(violations)} recorded one by one: every violation count here is from those records.`,
    );
  return parts.join(" ");
}

/** The job-type table with its Uncaught column from the durable rows (a job type seen only there gets a row). */
function withDurableViolations(rollups: JobTypeActivity[], byJobType: Map<string, number>): JobTypeActivity[] {
  const rows = rollups.map((j) => ({ ...j, uncaughtViolations: byJobType.get(j.jobType) ?? 0 }));
  for (const [jobType, n] of byJobType)
    if (!rows.some((j) => j.jobType === jobType))
      rows.push({
        jobType,
        deliveries: 0,
        redeliveries: 0,
        suppressions: 0,
        claims: 0,
        uncaughtViolations: n,
        notWiredUp: false,
      });
  return rows;
}

/**
 * The job-type table for one tenant: its own suppressions per job type (the hourly per-tenant
 * table); its violations are already its own (the durable rows, read for the scope).
 */
function withTenantCounts(
  fleet: JobTypeActivity[],
  suppressions: { name: string; values: (number | null)[] }[],
): JobTypeActivity[] {
  const suppressed = new Map<string, number>();
  for (const line of suppressions) suppressed.set(line.name, (suppressed.get(line.name) ?? 0) + sum(line.values));
  return fleet.map((j) => ({ ...j, suppressions: suppressed.get(j.jobType) ?? 0 }));
}

/**
 * The alerts as they stand for one job type: instances labelled with another job type are left
 * out, and an alert firing only for others is inactive here, saying for which it fires.
 */
function alertsForJobType(alerts: AlertStatus[], jobType: string | null): AlertStatus[] {
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
