"use client";

import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query";
import { useSearchParams } from "next/navigation";
import type { ReactNode } from "react";
import {
  DEFAULT_OVERVIEW_WINDOW,
  OVERVIEW_WINDOWS,
  type Overview,
  type OverviewWindow,
  WINDOW_LABELS,
} from "@/lib/console/overview-types";
import { ApiClientError, fetchJson } from "../api/fetch-json";
import { EmptyState, ErrorState } from "../ui/states";
import { formatClock } from "./format";
import { JobTypesTable } from "./job-types-table";
import { OverviewSkeleton } from "./overview-skeleton";
import { StatTiles } from "./stat-tiles";
import { StatusBreakdown } from "./status-breakdown";
import { SuppressionsChart } from "./suppressions-chart";
import { UncaughtViolations } from "./uncaught-violations";
import { WindowPicker } from "./window-picker";
import { WORKERS_QUERY_KEY, WorkersPanel } from "./workers-panel";

const REFRESH_MS = 15_000;

export function parseWindow(value: string | null): OverviewWindow {
  return (OVERVIEW_WINDOWS as readonly string[]).includes(value ?? "") ? (value as OverviewWindow) : DEFAULT_OVERVIEW_WINDOW;
}

function describeError(error: unknown): { title: string; message: string; code?: string; hint?: string } {
  if (error instanceof ApiClientError) {
    if (error.code === "DATABASE_UNAVAILABLE" || error.code === "DATABASE_NOT_CONFIGURED") {
      return {
        title: "The database cannot be reached",
        message: error.message,
        code: error.code,
        hint: "Check that PostgreSQL is running and that the console's DATABASE_URL points at it. This page asks again every 15 seconds.",
      };
    }
    if (error.code === "QUERY_TIMEOUT")
      return { title: "The database is too slow to answer", message: error.message, code: error.code };
    return { title: "The overview could not be loaded", message: error.message, code: error.code };
  }
  return { title: "The overview could not be loaded", message: error instanceof Error ? error.message : String(error) };
}

/** The Overview: effects by status and job type, suppressions, uncaught violations, for ?window=; then the live workers. */
export function OverviewView() {
  const searchParams = useSearchParams();
  const queryClient = useQueryClient();
  const window = parseWindow(searchParams.get("window"));
  const overview = useQuery({
    queryKey: ["overview", window],
    queryFn: ({ signal }) => fetchJson<Overview>(`/api/v1/overview?window=${window}`, signal),
    placeholderData: keepPreviousData,
    refetchInterval: REFRESH_MS,
  });
  const { data, error, isPending, isError, isFetching, isPlaceholderData, dataUpdatedAt, refetch } = overview;

  const toolbar = (
    <div className="toolbar">
      <WindowPicker value={window} />
      <div className="toolbar-end">
        <span className="refresh-meta" aria-live="polite">
          {isFetching ? "Refreshing…" : dataUpdatedAt > 0 ? `Updated ${formatClock(dataUpdatedAt)}` : ""}
        </span>
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
  );

  let body: ReactNode;
  if (isPending) {
    body = <OverviewSkeleton />;
  } else if (isError && !data) {
    const described = describeError(error);
    body = <ErrorState {...described} onRetry={() => void refetch()} retrying={isFetching} />;
  } else if (data) {
    const empty = data.jobTypes.length === 0;
    body = (
      <div className="overview" aria-busy={isPlaceholderData} data-window={data.window}>
        {isError ? (
          <div className="banner" data-tone="danger" role="alert">
            <span>
              The last refresh failed ({describeError(error).message}). Showing data from {formatClock(dataUpdatedAt)}.
            </span>
            <button type="button" className="button button-quiet" onClick={() => void refetch()}>
              Retry
            </button>
          </div>
        ) : null}
        <h2 className="sr-only">{WINDOW_LABELS[data.window]}</h2>
        <StatTiles totals={data.totals} />
        {empty ? (
          <EmptyState title={`No effects or worker activity in the ${WINDOW_LABELS[data.window].toLowerCase()}`}>
            <p>
              Effects appear here as soon as a worker runs a job through <code>effects.job()</code> or <code>effects.once()</code>
              : every claim writes a row to the effects table, and workers flush their claims, duplicate suppressions and uncaught
              unique violations to per-minute rollups.
            </p>
            <p className="muted">Try a longer window, or start a worker against this database.</p>
          </EmptyState>
        ) : (
          <>
            <div className="panel-grid">
              <SuppressionsChart jobTypes={data.jobTypes} />
              <StatusBreakdown totals={data.totals} />
            </div>
            <JobTypesTable jobTypes={data.jobTypes} />
            <UncaughtViolations rows={data.uncaughtViolations} now={data.to} />
          </>
        )}
      </div>
    );
  }

  return (
    <>
      {toolbar}
      {body}
      {/* Scraped from the workers themselves, not the database: shown whatever the overview's state. */}
      <WorkersPanel />
    </>
  );
}
