"use client";

import { useQuery } from "@tanstack/react-query";
import type { RetentionView } from "@/lib/features/retention-and-gaps/contract";
import { retentionQueryKey } from "@/lib/features/retention-and-gaps/retention-types";
import { formatUtcClock } from "@/lib/format";
import { ApiClientError, fetchJson, shouldRetry } from "../api/fetch-json";
import { ErrorState } from "../ui/error-state";
import { Skeleton } from "../ui/skeleton";
import { LiveWorkersSection } from "./live-workers-section";
import { PartitionsSection } from "./partitions-section";
import { PlanSection } from "./plan-section";
import { RunsSection } from "./runs-section";
import { SettingsSection } from "./settings-section";
import { TenantRetention } from "./tenant-retention";

const REFRESH_MS = 30_000;

/**
 * The Retention page: settings, runway, partitions with their guard, the plan, apply (admins), the
 * last `runs` maintenance runs. Data prefetched on the server under the same key, then polled.
 * `search` is the page's canonical query string.
 */
export function RetentionPanel({
  canApply,
  search,
  runs,
  defaultRuns,
}: {
  canApply: boolean;
  search: string;
  runs: number;
  defaultRuns: number;
}) {
  const query = useQuery({
    queryKey: retentionQueryKey(search),
    queryFn: ({ signal }) => fetchJson<RetentionView>(`/api/v1/retention${search ? `?${search}` : ""}`, signal),
    refetchInterval: REFRESH_MS,
    retry: shouldRetry,
  });

  if (query.isPending) return <Skeleton className="skeleton-chart" />;
  if (query.isError && !query.data) {
    const error = query.error;
    return (
      <ErrorState
        title="Retention could not be loaded"
        message={error instanceof Error ? error.message : String(error)}
        code={error instanceof ApiClientError ? error.code : undefined}
        onRetry={() => void query.refetch()}
        retrying={query.isFetching}
      />
    );
  }
  const data = query.data as RetentionView;
  const { plan } = data;
  if (plan === null) return <TenantRetention settings={data.settings} observedMaxGapSeconds={data.observedMaxGapSeconds} />;

  return (
    <div className="retention">
      {query.isError ? (
        <div className="banner" role="status">
          Showing data from {formatUtcClock(query.dataUpdatedAt)}: the last refresh failed ({String(query.error)}).
        </div>
      ) : null}
      <SettingsSection data={{ ...data, plan }} />
      <PlanSection plan={plan} canApply={canApply} />
      <PartitionsSection partitions={plan.partitions} />
      <LiveWorkersSection workers={data.liveWorkers} />
      <RunsSection runs={data.runs} shown={runs} defaultShown={defaultRuns} />
    </div>
  );
}
