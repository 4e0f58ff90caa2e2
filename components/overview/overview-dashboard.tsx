"use client";

import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { type OverviewResponse, overviewQueryKey } from "@/lib/console/overview-types";
import { formatUtc, formatUtcClock } from "@/lib/format";
import { fetchJson } from "../api/fetch-json";
import { QueryStates, REFRESH_MS } from "../ui/query-state";
import { formatCount, formatMeasure } from "./format";
import { OverviewFilters } from "./overview-filters";
import { AlertsPanel, JobActivityTable, StuckClaims, TopTenants, ViolationsBanner } from "./overview-panels";
import { OverviewSkeleton } from "./overview-skeleton";
import { TimeSeriesChart } from "./time-series-chart";
import { WORKERS_QUERY_KEY, WorkersPanel } from "./workers-panel";

const stepLabel = (s: number) => (s % 3600 === 0 ? `${s / 3600} h` : `${s / 60} min`);
const utcRange = (iso: string) => formatUtc(iso, { seconds: false });

function Tiles({ data }: { data: OverviewResponse }) {
  const t = data.totals;
  const tiles: [string, string, number, string | undefined][] = [
    ["deliveries", "Deliveries", t.deliveries, undefined],
    ["redeliveries", "Redeliveries", t.redeliveries, undefined],
    ["claims", "Claims", t.claims, undefined],
    ["suppressions", "Duplicates suppressed", t.suppressions, undefined],
    ["uncaught", "Uncaught violations", t.uncaughtViolations, t.uncaughtViolations > 0 ? "danger" : undefined],
    ["stuck", "Stuck claims (now)", t.stuck, t.stuck > 0 ? "warning" : undefined],
  ];
  return (
    <div className="stat-grid" data-testid="tiles">
      {tiles.map(([id, label, value, tone]) => (
        <div className="stat" key={id} data-tone={tone} data-testid={`stat-${id}`}>
          <span className="stat-label">{label}</span>
          <span className="stat-value">{formatCount(Math.round(value))}</span>
        </div>
      ))}
    </div>
  );
}

function Dashboard({ data }: { data: OverviewResponse }) {
  const s = data.series;
  const per = `per ${stepLabel(s.stepSeconds)}`;
  const ms = (v: number | null) => (v === null ? null : v * 1000);
  return (
    <div className="overview" data-source={data.source} data-range={data.range ?? "custom"}>
      <ViolationsBanner
        total={data.totals.uncaughtViolations}
        groups={data.violationGroups}
        range={{ from: data.from, to: data.to }}
      />
      {data.notes.map((n) => (
        <p key={n} className="banner" data-tone="info">
          {n}
        </p>
      ))}
      <Tiles data={data} />
      <div className="panel-grid">
        <AlertsPanel alerts={data.alerts} source={data.alertsSource} />
        <TopTenants tenants={data.topTenants} />
      </div>
      <div className="panel-grid">
        <TimeSeriesChart
          id="suppressions"
          title="Duplicate suppressions by job type"
          unit={per}
          kind="stacked-area"
          timestamps={s.timestamps}
          series={s.suppressions}
          emptyText="No duplicate was suppressed in this range."
        />
        <TimeSeriesChart
          id="violations"
          title="Uncaught unique violations"
          unit={per}
          kind="bar"
          tone="danger"
          timestamps={s.timestamps}
          series={s.violations}
          emptyText="No uncaught unique violation in this range."
        />
        <TimeSeriesChart
          id="claim-rate"
          title="Claim rate"
          unit="claims/s"
          kind="line"
          timestamps={s.timestamps}
          series={[{ name: "claims/s", values: s.claimRate }]}
          format={(v) => (v >= 10 ? v.toFixed(0) : formatMeasure(v))}
        />
        <TimeSeriesChart
          id="latency"
          title="Claim latency"
          unit="ms"
          kind="line"
          timestamps={s.timestamps}
          series={[
            { name: "p50", values: s.latencyP50.map(ms) },
            { name: "p99", values: s.latencyP99.map(ms) },
          ]}
          format={(v) => (v >= 10 ? v.toFixed(0) : v.toFixed(1))}
        />
        <TimeSeriesChart
          id="waits"
          title="In-flight waits and lease takeovers"
          unit={per}
          kind="bar"
          timestamps={s.timestamps}
          series={[
            { name: "in-flight waits", values: s.inFlight },
            { name: "lease takeovers", values: s.takeovers },
          ]}
        />
      </div>
      <JobActivityTable jobTypes={data.jobTypes} />
      <StuckClaims claims={data.stuck} total={data.totals.stuck} />
    </div>
  );
}

/**
 * The on-call Overview. `apiQuery` is the validated, canonical query string the server prefetched
 * under overviewQueryKey(apiQuery): the first paint is the server's data, then the client polls.
 */
export function OverviewDashboard({ apiQuery }: { apiQuery: string }) {
  const queryClient = useQueryClient();
  const [paused, setPaused] = useState(false);
  // "Refreshing…" and the update clock exist only in the browser: the server's HTML cannot know them.
  const [mounted, setMounted] = useState(false);
  useEffect(() => setMounted(true), []);
  const query = useQuery({
    queryKey: overviewQueryKey(apiQuery),
    queryFn: ({ signal }) => fetchJson<OverviewResponse>(`/api/v1/overview?${apiQuery}`, signal),
    placeholderData: keepPreviousData,
    refetchInterval: paused ? false : REFRESH_MS,
  });
  const { data, isFetching, dataUpdatedAt, refetch } = query;
  const refreshState = isFetching ? "Refreshing…" : dataUpdatedAt > 0 ? `updated ${formatUtcClock(dataUpdatedAt)}` : "";

  return (
    <>
      <div className="toolbar">
        {data ? (
          <OverviewFilters
            range={data.range}
            from={data.from}
            to={data.to}
            jobType={data.jobType}
            tenant={data.tenant}
            jobTypes={data.jobTypes.map((j) => j.jobType)}
            tenants={data.topTenants.map((t) => t.tenant)}
          />
        ) : null}
        <div className="toolbar-end">
          <span className="refresh-meta" aria-live="polite">
            {data ? (
              <>
                {utcRange(data.from)} – {utcRange(data.to)} · step {stepLabel(data.series.stepSeconds)} · source{" "}
                <strong data-testid="metrics-source">{data.source === "prometheus" ? "Prometheus" : "PostgreSQL rollups"}</strong>
                {" · "}
              </>
            ) : null}
            {mounted ? <span data-testid="refresh-state">{refreshState}</span> : null}
          </span>
          <button type="button" className="button button-quiet" aria-pressed={paused} onClick={() => setPaused((p) => !p)}>
            {paused ? "Resume live" : "Pause live"}
          </button>
          <button
            type="button"
            className="button button-quiet"
            onClick={() => {
              void refetch();
              void queryClient.refetchQueries({ queryKey: WORKERS_QUERY_KEY });
            }}
            disabled={isFetching}
          >
            Refresh
          </button>
        </div>
      </div>
      <QueryStates query={query} what="the overview" skeleton={<OverviewSkeleton />}>
        {(d) => <Dashboard data={d} />}
      </QueryStates>
      <WorkersPanel />
    </>
  );
}
