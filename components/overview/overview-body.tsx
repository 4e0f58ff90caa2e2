"use client";

import { statesHref } from "@/lib/features/keys-and-effects/states-types";
import type { OverviewResponse } from "@/lib/features/overview/contract";
import { formatMeasure } from "@/lib/format";
import { AlertsPanel } from "./alerts-panel";
import { JobActivityTable } from "./job-activity-table";
import { OverviewTiles } from "./overview-tiles";
import { StuckClaims } from "./stuck-claims";
import { answersForTenant, EVERY_TENANT, WITHHELD_TEXT, withheld } from "./tenant-scope";
import { TimeSeriesChart } from "./time-series-chart";
import { TopTenants } from "./top-tenants";
import { ViolationsBanner } from "./violations-banner";

/** One overview response: banners, tiles, alerts, top tenants, the charts, job activity and stuck claims. */
export function OverviewBody({ data }: { data: OverviewResponse }) {
  const s = data.series;
  const ms = (v: number | null) => (v === null ? null : v * 1000);
  // The claim charts come from the per-minute rollups, which carry no tenant.
  // A tenant session is not shown them at all (OverviewResponse.withheld).
  const chartWithheld = withheld(data, "series.claimRate") ? WITHHELD_TEXT : undefined;
  const fleetOnly = data.tenant === null || chartWithheld ? undefined : EVERY_TENANT;
  return (
    <div className="overview" data-source={data.source} data-range={data.range ?? "custom"}>
      <ViolationsBanner
        total={data.totals.uncaughtViolations}
        groups={data.violationGroups}
        range={{ from: data.from, to: data.to }}
      />
      {data.jobType !== null && !data.jobTypeKnown ? (
        <p className="banner banner-danger" role="alert" data-testid="unknown-job-type">
          No worker ever reported a job type named <code>{data.jobType}</code>: every number below is zero for that reason. Job
          types match exactly; pick one from the Job types table without the filter.
        </p>
      ) : null}
      {data.notes.map((n) => (
        <p key={n} className="banner" data-tone="info">
          {n}
        </p>
      ))}
      <OverviewTiles data={data} />
      <div className="panel-grid">
        <AlertsPanel
          alerts={data.alerts}
          source={data.alertsSource}
          everyTenant={!answersForTenant(data, "alerts") && !withheld(data, "alerts")}
          withheldText={withheld(data, "alerts") ? WITHHELD_TEXT : undefined}
        />
        <TopTenants tenants={data.topTenants} />
      </div>
      <div className="panel-grid">
        <TimeSeriesChart
          id="suppressions"
          title="Duplicate suppressions by job type"
          measure={{ counts: "suppressions" }}
          kind="stacked-area"
          buckets={s.suppressionBuckets}
          series={s.suppressions}
          emptyText="No duplicate was suppressed in this range."
        />
        <TimeSeriesChart
          id="violations"
          title="Uncaught unique violations"
          measure={{ counts: "violations" }}
          kind="bar"
          tone="danger"
          buckets={s}
          series={s.violations}
          emptyText="No uncaught unique violation in this range."
        />
        <TimeSeriesChart
          id="claim-rate"
          title="Claim rate"
          measure={{ unit: "claims/s" }}
          scope={fleetOnly}
          kind="line"
          buckets={s}
          series={[{ name: "claims/s", values: s.claimRate }]}
          format={(v) => (v >= 10 ? v.toFixed(0) : formatMeasure(v))}
          emptyText={chartWithheld ?? "No claim in this range."}
        />
        <TimeSeriesChart
          id="latency"
          title="Claim latency"
          measure={{ unit: "ms" }}
          scope={fleetOnly}
          kind="line"
          buckets={s}
          series={[
            { name: "p50", values: s.latencyP50.map(ms) },
            { name: "p99", values: s.latencyP99.map(ms) },
          ]}
          format={(v) => (v >= 10 ? v.toFixed(0) : v.toFixed(1))}
          emptyText={chartWithheld ?? "No claim in this range, so no latency to show."}
        />
        <TimeSeriesChart
          id="waits"
          title="In-flight waits and lease takeovers"
          measure={{ counts: "events" }}
          scope={fleetOnly}
          kind="bar"
          buckets={s}
          series={[
            { name: "in-flight waits", values: s.inFlight },
            { name: "lease takeovers", values: s.takeovers },
          ]}
          emptyText={chartWithheld ?? "No in-flight wait and no lease takeover in this range."}
        />
      </div>
      <JobActivityTable
        jobTypes={data.jobTypes}
        tenant={data.tenant}
        tenantCounts={answersForTenant(data, "jobTypes.suppressions") && answersForTenant(data, "jobTypes.uncaughtViolations")}
        fleetWithheld={withheld(data, "jobTypes.deliveries")}
      />
      <StuckClaims
        claims={data.stuck}
        total={data.totals.stuck}
        browseHref={statesHref({ state: "stuck", tenant: data.tenant, jobType: data.jobType })}
      />
    </div>
  );
}
