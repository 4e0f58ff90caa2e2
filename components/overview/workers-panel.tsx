"use client";

import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import type { WorkersResponse } from "@/lib/features/workers/contract";
import { formatUtcClock } from "@/lib/format";
import { ApiClientError, fetchJson } from "../api/fetch-json";
import { DataTable } from "../ui/data-table";
import { ErrorState } from "../ui/error-state";
import { Skeleton } from "../ui/skeleton";
import { WORKER_COLUMNS } from "./worker-columns";

const REFRESH_MS = 15_000;

/** The query the Overview's Refresh button also refetches. */
export const WORKERS_QUERY_KEY = ["workers"] as const;

function describeError(error: unknown): { title: string; message: string; code?: string; hint?: string } {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof ApiClientError && error.code === "CONFIG_INVALID") {
    return {
      title: "The workers' addresses are misconfigured",
      message,
      code: error.code,
      hint: "Fix WORKER_METRICS_URLS (comma-separated http(s) /metrics URLs) and restart the console.",
    };
  }
  return {
    title: "The workers could not be listed",
    message,
    code: error instanceof ApiClientError ? error.code : undefined,
  };
}

/**
 * Each worker process in WORKER_METRICS_URLS, scraped live by the console: up or down (and why),
 * and its idem_* counters since it started. Independent of the database, so it still answers when
 * the rest of the Overview cannot.
 */
export function WorkersPanel() {
  const query = useQuery({
    queryKey: WORKERS_QUERY_KEY,
    queryFn: ({ signal }) => fetchJson<WorkersResponse>("/api/v1/workers", signal),
    refetchInterval: REFRESH_MS,
  });
  const { data, error, isPending, isError, isFetching, dataUpdatedAt, refetch } = query;
  const down = data?.workers.filter((w) => !w.up).length ?? 0;

  let body: ReactNode;
  if (isPending) {
    body = (
      <div className="panel-body">
        <p className="sr-only" role="status">
          Loading workers…
        </p>
        <Skeleton className="skeleton-row" />
        <Skeleton className="skeleton-row" />
      </div>
    );
  } else if (isError && !data) {
    body = <ErrorState {...describeError(error)} onRetry={() => void refetch()} retrying={isFetching} />;
  } else if (data?.withheld) {
    body = (
      <div className="panel-empty" data-testid="workers-withheld">
        <p>{data.withheld}</p>
      </div>
    );
  } else if (data && data.workers.length === 0) {
    body = (
      <div className="panel-empty">
        <p>No workers to show.</p>
        <p className="muted">
          Workers appear here when the console is started by <code>npm start</code>, which runs the demo&apos;s worker processes,
          or when <code>WORKER_METRICS_URLS</code> lists your workers&apos; <code>/metrics</code> URLs, comma-separated.
        </p>
      </div>
    );
  } else if (data) {
    body = (
      <>
        {isError ? (
          <div className="banner panel-banner" data-tone="danger">
            <span>
              The last refresh failed ({describeError(error).message}). Showing the scrape from {formatUtcClock(dataUpdatedAt)}.
            </span>
            <button type="button" className="button button-quiet" onClick={() => void refetch()}>
              Retry
            </button>
          </div>
        ) : null}
        <DataTable
          columns={WORKER_COLUMNS}
          rows={data.workers}
          rowKey={(worker) => worker.url}
          rowProps={(worker) => ({ "data-testid": "worker", "data-state": worker.up ? "up" : "down", "data-url": worker.url })}
          labelledBy="workers-heading"
        />
      </>
    );
  }

  return (
    <section className="panel panel-flush workers-panel" aria-labelledby="workers-heading" aria-busy={isFetching}>
      <div className="panel-header">
        <h2 id="workers-heading">
          Workers
          {down > 0 ? (
            <span className="badge" data-tone="danger">
              {down} down
            </span>
          ) : null}
        </h2>
        <span className="panel-meta">
          {data && data.workers.length > 0
            ? `counters since each worker started · scraped ${formatUtcClock(dataUpdatedAt)}`
            : "scraped live from each worker's /metrics"}
        </span>
      </div>
      {body}
    </section>
  );
}
