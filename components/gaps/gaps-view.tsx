"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { keyHref } from "@/lib/features/keys-and-effects/keys-types";
import type { Gaps } from "@/lib/features/retention-and-gaps/gaps-contract";
import { gapsQueryKey } from "@/lib/features/retention-and-gaps/gaps-types";
import { formatDuration, formatUtc } from "@/lib/format";
import { ApiClientError, fetchJson } from "../api/fetch-json";
import { type Column, DataTable } from "../ui/data-table";
import { EmptyState } from "../ui/empty-state";
import { ErrorState } from "../ui/error-state";
import { AdvicePanel } from "./advice-panel";
import { describeRange, GapFilters, type GapsParams } from "./gap-filters";
import { GapHistogramChart } from "./gap-histogram-chart";
import { GapStatsTable } from "./gap-stats-table";
import { GapsOverTime } from "./gaps-over-time";

const REFRESH_MS = 60_000;

type LateDuplicate = Gaps["latestLate"][number];

/** A late duplicate is named by its key; a gap past the retention is in red. */
function lateColumns(retentionSeconds: number): Column<LateDuplicate>[] {
  return [
    { id: "tenant", label: "Tenant", kind: "id", cell: (l) => l.tenant },
    {
      id: "key",
      label: "Key",
      kind: "key",
      priority: 1,
      cell: (l) => (
        <Link href={keyHref(l.tenant, l.key)}>
          <code>{l.key}</code>
        </Link>
      ),
    },
    { id: "job-type", label: "Job type", kind: "id", cell: (l) => l.jobType },
    {
      id: "gap",
      label: "Gap",
      kind: "number",
      cell: (l) => formatDuration(l.gapSeconds),
      cellProps: (l) => ({ className: l.gapSeconds > retentionSeconds ? "text-danger" : undefined }),
    },
    { id: "arrived", label: "Arrived", kind: "time", cell: (l) => formatUtc(l.at, { seconds: false }) },
  ];
}

/** The Delivery gaps page body; data prefetched on the server (same key), then polled. `canApply`: a platform admin. */
export function GapsView({ search, params, canApply }: { search: string; params: GapsParams; canApply: boolean }) {
  const query = useQuery({
    queryKey: gapsQueryKey(search),
    queryFn: ({ signal }) => fetchJson<Gaps>(`/api/v1/gaps${search ? `?${search}` : ""}`, signal),
    placeholderData: keepPreviousData,
    refetchInterval: REFRESH_MS,
  });
  const { data, error, isError, isPending, isFetching, refetch } = query;
  if (isPending) return <p role="status">Loading delivery gaps…</p>;
  if (!data) {
    const e = error instanceof ApiClientError ? error : null;
    return (
      <ErrorState
        title="The delivery gaps could not be loaded"
        message={error instanceof Error ? error.message : String(error)}
        code={e?.code}
        onRetry={() => void refetch()}
        retrying={isFetching}
      />
    );
  }
  const g = data;
  return (
    <div className="gaps" data-testid="gaps-page">
      <GapFilters params={params} jobTypes={g.jobTypeOptions} />
      <p className="muted" data-testid="gaps-range">
        {describeRange(g)} · source:{" "}
        {g.source === "rollups"
          ? "worker rollups (every suppressed duplicate, all tenants)"
          : `effects table, tenant ${g.tenant} (each effect's longest gap)`}
        {isError ? (
          <span className="badge" role="status">
            stale: the last refresh failed
          </span>
        ) : null}
      </p>
      <AdvicePanel gaps={g} canApply={canApply} />
      {g.all.stats.samples === 0 ? (
        <EmptyState title="No redelivery gaps in this range">
          <p>No duplicate arrived after its effect was claimed, or no worker has flushed rollups yet.</p>
        </EmptyState>
      ) : (
        <>
          <section className="panel" aria-labelledby="hist-heading">
            <div className="panel-header">
              <h2 id="hist-heading">Redelivery gaps: {g.all.name}</h2>
              <span className="panel-meta">
                p50 {formatDuration(g.all.stats.p50)} · p90 {formatDuration(g.all.stats.p90)} · p99{" "}
                {formatDuration(g.all.stats.p99)} · p99.9 {formatDuration(g.all.stats.p999)} · max{" "}
                {g.all.stats.maxExact
                  ? formatDuration(g.all.stats.maxAtLeast)
                  : g.all.stats.maxAtMost === null
                    ? `> ${formatDuration(g.all.stats.maxAtLeast)}`
                    : `≤ ${formatDuration(g.all.stats.maxAtMost)}`}
              </span>
            </div>
            <GapHistogramChart
              title={`Redelivery gaps, ${g.all.name}`}
              bounds={g.bounds}
              buckets={g.all.buckets}
              retentionSeconds={g.retentionSeconds}
              retryWindowSeconds={g.maxRetryWindowSeconds}
              height={260}
              testId="gap-histogram"
            />
          </section>
          <section className="panel" aria-labelledby="jt-heading">
            <div className="panel-header">
              <h2 id="jt-heading">By job type</h2>
              <span className="panel-meta">first claim → a duplicate's arrival</span>
            </div>
            <GapStatsTable caption="Gap percentiles by job type" rows={g.jobTypes} params={params} kind="job_type" />
            <div className="small-multiples">
              {g.jobTypes.slice(0, 12).map((s) => (
                <div key={s.name} className="small-multiple">
                  <h3>{s.name}</h3>
                  <GapHistogramChart
                    title={`Redelivery gaps, ${s.name}`}
                    bounds={g.bounds}
                    buckets={s.buckets}
                    retentionSeconds={g.retentionSeconds}
                    retryWindowSeconds={g.maxRetryWindowSeconds}
                    height={160}
                  />
                </div>
              ))}
            </div>
          </section>
          <section className="panel" aria-labelledby="time-heading">
            <div className="panel-header">
              <h2 id="time-heading">Gaps over time</h2>
              <span className="panel-meta">p99 and max per UTC day</span>
            </div>
            <GapsOverTime daily={g.daily} retentionSeconds={g.retentionSeconds} />
          </section>
        </>
      )}
      <section className="panel" aria-labelledby="tenants-heading">
        <div className="panel-header">
          <h2 id="tenants-heading">Tenants with the most late redeliveries</h2>
          <span className="panel-meta">
            effects whose longest gap exceeds the {formatDuration(g.lateThresholdSeconds)} retry window
          </span>
        </div>
        {g.tenants.length === 0 ? (
          <p className="panel-empty">No late redeliveries in this range.</p>
        ) : (
          <GapStatsTable caption="Gap percentiles by tenant" rows={g.tenants} params={params} kind="tenant" />
        )}
      </section>
      <section className="panel" aria-labelledby="late-heading">
        <div className="panel-header">
          <h2 id="late-heading">Latest late duplicates</h2>
          <span className="panel-meta">gap beyond {formatDuration(g.lateThresholdSeconds)}</span>
        </div>
        {g.latestLate.length === 0 ? (
          <p className="panel-empty">None in this range.</p>
        ) : (
          <DataTable
            columns={lateColumns(g.retentionSeconds)}
            rows={g.latestLate}
            rowKey={(l) => `${l.tenant}\u0001${l.key}`}
            labelledBy="late-heading"
            testId="late-duplicates"
          />
        )}
      </section>
    </div>
  );
}
