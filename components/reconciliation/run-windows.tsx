"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import { useId, useState } from "react";
import type {
  ReconciliationRun,
  ReconciliationRunListResponse,
  ReconciliationWindow,
} from "@/lib/features/reconciliation/contract";
import { windowRunsApiUrl, windowRunsQueryKey } from "@/lib/features/reconciliation/reconciliation-types";
import { formatCountOf, formatDuration, formatUtc } from "@/lib/format";
import { fetchJson } from "../api/fetch-json";
import { describeApiError } from "../ui/describe-api-error";
import { EmptyState } from "../ui/empty-state";
import { ErrorState } from "../ui/error-state";
import { RunCounts } from "./run-counts";
import { RunProgress } from "./run-progress";
import { formatWindow, windowEnds } from "./window-label";

const STATUS_TONE = { running: "warning", completed: "success", failed: "danger" } as const;

/** A window's ends, each kept whole; a narrow column breaks the line after the arrow. */
function WindowRange({ from, to }: { from: string; to: string }) {
  const [start, end] = windowEnds(from, to);
  return (
    <span className="run-range">
      <span>{start} →</span> <span>{end}</span>
    </span>
  );
}

/**
 * One run's facts in a row: status and when, how far it read, what it found. A tenant is shown
 * when and how it ran, not its tallies or counts (they span every tenant; RunWindows says so once).
 */
function RunFacts({ run }: { run: ReconciliationRun }) {
  const tenantView = run.counts === null;
  return (
    <>
      <div className="run-when">
        <span className="badge" data-tone={STATUS_TONE[run.status]}>
          {run.status}
        </span>{" "}
        <span className="run-count">started {formatUtc(run.startedAt)}</span>
        {" · "}
        <span className="run-count">
          {run.status === "running" ? "running for" : "took"} {formatDuration(run.durationSeconds, { whole: true })}
        </span>
        {run.error ? <div className="muted run-error">{run.error}</div> : null}
      </div>
      {tenantView && run.status !== "running" ? null : (
        <div className="run-read">
          <RunProgress run={run} />
        </div>
      )}
      {tenantView ? null : (
        <div className="run-found">
          <RunCounts run={run} />
        </div>
      )}
    </>
  );
}

/** A window's earlier runs, newest first (the latest is shown above them), read when unfolded. */
function EarlierRuns({ window, id }: { window: ReconciliationWindow; id: string }) {
  const runs = useInfiniteQuery({
    queryKey: windowRunsQueryKey(window),
    queryFn: ({ pageParam, signal }) => fetchJson<ReconciliationRunListResponse>(windowRunsApiUrl(window, pageParam), signal),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
  });
  if (runs.isPending)
    return (
      <p role="status" id={id}>
        Loading the earlier runs…
      </p>
    );
  if (runs.isError)
    return (
      <div id={id}>
        <ErrorState
          {...describeApiError(runs.error, "the earlier runs")}
          onRetry={() => void runs.refetch()}
          retrying={runs.isFetching}
        />
      </div>
    );
  const earlier = runs.data.pages.flatMap((page) => page.runs).filter((run) => run.id !== window.latest.id);
  return (
    <div id={id} className="run-earlier">
      {earlier.length === 0 ? (
        <p className="muted">No earlier run of this window.</p>
      ) : (
        <ol aria-label={`Earlier runs of ${window.provider} ${formatWindow(window.windowFrom, window.windowTo)}`}>
          {earlier.map((run) => (
            <li key={run.id} className="run-line" data-testid="earlier-run" data-status={run.status}>
              <RunFacts run={run} />
            </li>
          ))}
        </ol>
      )}
      {runs.hasNextPage ? (
        <button
          type="button"
          className="button button-quiet"
          onClick={() => void runs.fetchNextPage()}
          disabled={runs.isFetchingNextPage}
        >
          {runs.isFetchingNextPage ? "Loading…" : "Older runs of this window"}
        </button>
      ) : null}
    </div>
  );
}

/** A provider's window: its latest run, and its earlier runs folded under it. */
function RunWindowItem({ window, label }: { window: ReconciliationWindow; label: string }) {
  const [open, setOpen] = useState(false);
  const foldId = useId();
  const earlier = window.runCount - 1;
  return (
    <li className="run-window" data-testid="run-window" data-status={window.latest.status}>
      <div className="run-line">
        <div className="run-what">
          <strong>{label}</strong> <WindowRange from={window.windowFrom} to={window.windowTo} />
        </div>
        <RunFacts run={window.latest} />
      </div>
      {earlier > 0 ? (
        <button
          type="button"
          className="run-fold"
          aria-expanded={open}
          aria-controls={open ? foldId : undefined}
          onClick={() => setOpen((was) => !was)}
          data-testid="run-window-fold"
        >
          {open ? "Hide" : "Show"} {formatCountOf(earlier, "earlier run")} of this window
        </button>
      ) : null}
      {open ? <EarlierRuns window={window} id={foldId} /> : null}
    </li>
  );
}

/**
 * The reconciled windows, each once: its latest run (what its findings now rest on) and, folded,
 * the reruns before it, so the scheduler's reruns of one hour do not push the findings down.
 */
export function RunWindows({
  windows,
  configured,
  labels,
  more,
}: {
  windows: ReconciliationWindow[];
  configured: boolean;
  /** Provider name → what the console calls it. */
  labels: Record<string, string>;
  /** Older windows (keyset pages): absent on the last page. */
  more?: { load: () => void; loading: boolean };
}) {
  if (windows.length === 0)
    return (
      <EmptyState title="No reconciliation runs yet">
        <p className="muted" data-testid="no-runs">
          {configured ? (
            <>
              No run has been made yet. The maintenance loop reconciles each configured provider every few minutes;{" "}
              <code>npm run reconcile</code> runs one by hand.
            </>
          ) : (
            "None can run until a provider is configured."
          )}
        </p>
      </EmptyState>
    );
  return (
    <section className="panel panel-flush" aria-labelledby="runs-heading" data-testid="run-windows">
      <div className="panel-header">
        <h2 id="runs-heading">Runs</h2>
        <span className="panel-meta">
          each window once, by its latest run, newest first; reruns folded under it
          {windows[0]?.latest.counts === null
            ? ". A run reads every tenant's objects: its tallies are the platform's, your tenant's findings are below"
            : ""}
        </span>
      </div>
      <ol className="run-windows" aria-labelledby="runs-heading">
        {windows.map((w) => (
          // A window's identity, not its latest run's: a rerun arriving keeps the window's fold as it was.
          <RunWindowItem
            key={`${w.provider}|${w.windowFrom}|${w.windowTo}`}
            window={w}
            label={labels[w.provider] ?? w.provider}
          />
        ))}
      </ol>
      {more ? (
        <div className="panel-body">
          <button type="button" className="button button-quiet" onClick={more.load} disabled={more.loading}>
            {more.loading ? "Loading…" : "Older windows"}
          </button>
        </div>
      ) : null}
    </section>
  );
}
