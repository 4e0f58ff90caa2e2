"use client";

import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type { OverviewResponse } from "@/lib/features/overview/contract";
import { overviewQueryKey } from "@/lib/features/overview/overview-types";
import { formatDuration, formatUtc, formatUtcClock } from "@/lib/format";
import { fetchJson } from "../api/fetch-json";
import { REFRESH_MS } from "../ui/describe-api-error";
import { QueryStates } from "../ui/query-state";
import { OverviewBody } from "./overview-body";
import { OverviewFilters } from "./overview-filters";
import { OverviewSkeleton } from "./overview-skeleton";
import { WORKERS_QUERY_KEY, WorkersPanel } from "./workers-panel";

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
                {formatUtc(data.from, { seconds: false })} – {formatUtc(data.to, { seconds: false })} · step{" "}
                {formatDuration(data.series.stepSeconds)} · source{" "}
                <strong data-testid="metrics-source">
                  {data.source === "prometheus" ? "Prometheus" : data.source === "mysql" ? "MySQL rollups" : "PostgreSQL rollups"}
                </strong>
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
        {(d) => <OverviewBody data={d} />}
      </QueryStates>
      <WorkersPanel />
    </>
  );
}
