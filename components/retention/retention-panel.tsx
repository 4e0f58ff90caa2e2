"use client";

import { useQuery } from "@tanstack/react-query";
import { formatDuration, formatUtcClock } from "@/lib/format";
import { type RetentionView, retentionQueryKey } from "@/lib/retention/retention-types";
import { ApiClientError, fetchJson, shouldRetry } from "../api/fetch-json";
import { ErrorState, Skeleton } from "../ui/states";
import { LiveWorkersSection } from "./live-workers-section";
import { PartitionsSection } from "./partitions-section";
import { PlanSection } from "./plan-section";
import { RunsSection } from "./runs-section";
import { SettingsSection } from "./settings-section";

const REFRESH_MS = 30_000;

/**
 * What a tenant token sees (the API's view with plan null): how long its keys are kept and the
 * largest gap its own effects saw. Partitions, the plan, live workers and maintenance runs span
 * every tenant, and the page says so instead of showing them.
 */
function TenantRetention({
  settings,
  observedMaxGapSeconds,
}: {
  settings: RetentionView["settings"];
  observedMaxGapSeconds: number | null;
}) {
  return (
    <div className="retention">
      <section className="panel" aria-labelledby="retention-settings">
        <div className="panel-header">
          <h2 id="retention-settings">Settings</h2>
        </div>
        <dl className="retention-facts">
          <div>
            <dt>Retention</dt>
            <dd data-testid="retention-days">{settings.retentionDays} d</dd>
          </div>
          <div>
            <dt>Max retry window</dt>
            <dd>{settings.maxRetryWindowDays} d</dd>
          </div>
          <div>
            <dt>Largest gap on your effects</dt>
            <dd>{observedMaxGapSeconds === null ? "none yet" : formatDuration(observedMaxGapSeconds)}</dd>
          </div>
        </dl>
      </section>
      <p className="panel-empty" data-testid="retention-platform-only">
        Partitions, the maintenance plan, live workers and maintenance runs cover every tenant&apos;s effects: they are shown to
        platform tokens only.
      </p>
    </div>
  );
}

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
