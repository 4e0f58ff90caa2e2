"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { type ApplyResultView, type RetentionView, retentionQueryKey } from "@/lib/retention/retention-types";
import { ApiClientError, fetchJson, shouldRetry } from "../api/fetch-json";
import { EmptyState, ErrorState, Skeleton } from "../ui/states";
import { formatBytes, formatSeconds, formatUtc } from "./format";

const REFRESH_MS = 30_000;
/** The run counts offered beside the runs table (?runs=), besides the default. */
const RUN_COUNTS = [20, 50, 200];

async function postApply(): Promise<ApplyResultView> {
  const response = await fetch("/api/v1/retention/apply", { method: "POST", headers: { accept: "application/json" } });
  const body = (await response.json().catch(() => null)) as
    | (ApplyResultView & { error?: { code?: string; message?: string } })
    | null;
  if (!response.ok) {
    const error = body?.error as { code?: string; message?: string } | undefined;
    throw new ApiClientError(response.status, error?.code ?? `HTTP_${response.status}`, error?.message ?? response.statusText);
  }
  return body as ApplyResultView;
}

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
            <dd>{formatSeconds(observedMaxGapSeconds)}</dd>
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
  const counts = [...new Set([defaultRuns, ...RUN_COUNTS, runs])].sort((a, b) => a - b);
  const queryClient = useQueryClient();
  const query = useQuery({
    queryKey: retentionQueryKey(search),
    queryFn: ({ signal }) => fetchJson<RetentionView>(`/api/v1/retention${search ? `?${search}` : ""}`, signal),
    refetchInterval: REFRESH_MS,
    retry: shouldRetry,
  });
  const [confirming, setConfirming] = useState(false);
  const apply = useMutation({
    mutationFn: postApply,
    onSettled: () => {
      setConfirming(false);
      void queryClient.invalidateQueries({ queryKey: ["retention"] });
    },
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
  const { settings, plan } = data;
  if (plan === null) return <TenantRetention settings={settings} observedMaxGapSeconds={data.observedMaxGapSeconds} />;
  const drops = plan.partitions.filter((p) => p.action !== "keep");
  const largestWindow = data.liveWorkers.reduce((max, w) => Math.max(max, w.maxRetryWindowSeconds), 0);

  return (
    <div className="retention">
      {query.isError ? (
        <div className="banner" role="status">
          Showing data from {new Date(query.dataUpdatedAt).toLocaleTimeString()}: the last refresh failed ({String(query.error)}).
        </div>
      ) : null}

      <section className="panel" aria-labelledby="retention-settings">
        <div className="panel-header">
          <h2 id="retention-settings">Settings</h2>
          <span className="panel-meta">
            {settings.updatedBy ? `changed by ${settings.updatedBy} ${formatUtc(settings.updatedAt)} UTC` : "defaults"}
          </span>
        </div>
        <dl className="retention-facts">
          <div>
            <dt>Retention</dt>
            <dd data-testid="retention-days">{settings.retentionDays} d</dd>
          </div>
          <div>
            <dt>Observed maximum gap</dt>
            <dd title="Largest redelivery gap seen on any effect; the gaps advisor's recommendation replaces it">
              {formatSeconds(data.observedMaxGapSeconds)}
            </dd>
          </div>
          <div>
            <dt>Largest live retry window</dt>
            <dd>{largestWindow > 0 ? formatSeconds(largestWindow) : `none (settings: ${settings.maxRetryWindowDays} d)`}</dd>
          </div>
          <div>
            <dt>Interval / premade</dt>
            <dd>
              {settings.partitionInterval} × {settings.premakeCount}
            </dd>
          </div>
          <div>
            <dt>Runway</dt>
            <dd data-testid="runway">{formatSeconds(plan.runwayHours * 3600)}</dd>
          </div>
          <div>
            <dt>Nothing dropped after</dt>
            <dd>{formatUtc(plan.dropBefore)} UTC</dd>
          </div>
        </dl>
      </section>

      <section className="panel" aria-labelledby="retention-plan">
        <div className="panel-header">
          <h2 id="retention-plan">Plan</h2>
          {canApply ? (
            confirming ? (
              <span>
                <button type="button" className="button" onClick={() => apply.mutate()} disabled={apply.isPending}>
                  {apply.isPending ? "Applying…" : "Confirm apply"}
                </button>{" "}
                <button type="button" className="button button-quiet" onClick={() => setConfirming(false)}>
                  Cancel
                </button>
              </span>
            ) : (
              <button type="button" className="button" onClick={() => setConfirming(true)}>
                Apply plan…
              </button>
            )
          ) : null}
        </div>
        {confirming ? (
          <p className="muted">
            This creates {plan.create.length} partition(s), detaches and drops {drops.length} (their rows are deleted for good)
            and indexes {plan.index.length} closed partition(s).
          </p>
        ) : null}
        {apply.data ? (
          <p role="status" data-testid="apply-result">
            Run {apply.data.runId ?? "-"}: {apply.data.result}, {apply.data.operations.length} operation(s)
            {apply.data.error ? `: ${apply.data.error}` : ""}
          </p>
        ) : null}
        {apply.isError ? <p role="alert">Apply failed: {String(apply.error)}</p> : null}
        {plan.create.length === 0 && drops.length === 0 && plan.orphans.length === 0 && plan.index.length === 0 ? (
          <p className="panel-empty" data-testid="plan-empty">
            Nothing to do: every partition ahead exists, nothing has expired and every closed partition is indexed.
          </p>
        ) : (
          <ul className="retention-plan" data-testid="plan">
            {plan.create.map((c) => (
              <li key={`c-${c.name}`}>
                create <code>{c.name}</code> {formatUtc(c.from)} – {formatUtc(c.to)} ({c.reason})
              </li>
            ))}
            {drops.map((p) => (
              <li key={`d-${p.name}`}>
                {p.action === "finalize" ? "finish detach and drop" : "detach and drop"} <code>{p.name}</code>: {p.reason}
              </li>
            ))}
            {plan.orphans.map((o) => (
              <li key={`o-${o}`}>
                drop <code>{o}</code> (detached by an earlier run)
              </li>
            ))}
            {plan.index.map((i) => (
              <li key={`i-${i.partition}`}>
                index <code>{i.partition}</code>: {i.reason}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section className="panel panel-flush" aria-labelledby="retention-partitions">
        <div className="panel-header">
          <h2 id="retention-partitions">Partitions</h2>
          <span className="panel-meta">{plan.partitions.length}</span>
        </div>
        <div className="table-scroll">
          <table className="data-table" data-testid="partitions">
            <thead>
              <tr>
                <th scope="col">Partition</th>
                <th scope="col">Range (UTC)</th>
                <th scope="col" className="num">
                  Rows (est.)
                </th>
                <th scope="col" className="num">
                  Size
                </th>
                <th scope="col" className="num">
                  In progress
                </th>
                <th scope="col">Kept by</th>
              </tr>
            </thead>
            <tbody>
              {plan.partitions.map((p) => (
                <tr key={p.name} data-partition={p.name}>
                  <td>
                    <code>{p.name}</code>
                  </td>
                  <td>
                    {formatUtc(p.from)} – {formatUtc(p.to)}
                  </td>
                  <td className="num">{Math.round(p.estimatedRows).toLocaleString()}</td>
                  <td className="num">{formatBytes(p.bytes)}</td>
                  <td className="num">{p.liveClaims ?? "–"}</td>
                  <td title={p.reason}>{p.action === "keep" ? p.guard : <span className="badge">{p.action}</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>

      <section className="panel panel-flush" aria-labelledby="retention-workers">
        <div className="panel-header">
          <h2 id="retention-workers">Declared retry windows of live workers</h2>
        </div>
        {data.liveWorkers.length === 0 ? (
          <p className="panel-empty">No live worker has registered (createEffects with register or maintain).</p>
        ) : (
          <div className="table-scroll">
            <table className="data-table">
              <thead>
                <tr>
                  <th scope="col">Worker</th>
                  <th scope="col" className="num">
                    Retry window
                  </th>
                  <th scope="col">Last heartbeat (UTC)</th>
                </tr>
              </thead>
              <tbody>
                {data.liveWorkers.map((w) => (
                  <tr key={w.workerId}>
                    <td>
                      <code>{w.workerId}</code>
                    </td>
                    <td className="num">{formatSeconds(w.maxRetryWindowSeconds)}</td>
                    <td>{formatUtc(w.heartbeatAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section className="panel panel-flush" aria-labelledby="retention-runs">
        <div className="panel-header">
          <h2 id="retention-runs">Maintenance runs</h2>
          <span className="panel-meta" data-testid="run-counts">
            last{" "}
            {counts.map((n, i) => (
              <span key={n}>
                {i > 0 ? " · " : null}
                {n === runs ? (
                  <strong aria-current="true">{n}</strong>
                ) : (
                  <Link href={n === defaultRuns ? "/retention" : `/retention?runs=${n}`}>{n}</Link>
                )}
              </span>
            ))}
          </span>
        </div>
        {data.runs.length === 0 ? (
          <EmptyState title="No maintenance run yet">
            <p>The console runs one at start and every few minutes; workers with maintain do too.</p>
          </EmptyState>
        ) : (
          <div className="table-scroll">
            <table className="data-table" data-testid="runs">
              <thead>
                <tr>
                  <th scope="col">Run</th>
                  <th scope="col">Started (UTC)</th>
                  <th scope="col">By</th>
                  <th scope="col">Result</th>
                  <th scope="col">Operations</th>
                </tr>
              </thead>
              <tbody>
                {data.runs.map((r) => (
                  <tr key={r.id}>
                    <td>{r.id}</td>
                    <td>{formatUtc(r.startedAt)}</td>
                    <td>
                      {r.trigger}: {r.runner}
                    </td>
                    <td title={r.error ?? undefined}>{r.result}</td>
                    <td>
                      {r.operations.length === 0
                        ? "none"
                        : r.operations
                            .map((o) => `${o.kind} ${o.partition}${o.result === "ok" ? "" : ` (${o.result})`}`)
                            .join(", ")}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </div>
  );
}
