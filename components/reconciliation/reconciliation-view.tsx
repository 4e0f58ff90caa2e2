"use client";

import { keepPreviousData, useInfiniteQuery, useQuery } from "@tanstack/react-query";
import type { Role } from "@/lib/auth/auth-types";
import type { FindingListResponse, ReconciliationWindowListResponse } from "@/lib/features/reconciliation/contract";
import { anyProviderConfigured, type ProviderSetup } from "@/lib/features/reconciliation/provider-setup-types";
import {
  type FindingFilters as Filters,
  findingsApiUrl,
  findingsQueryKey,
  WINDOWS_FIRST_PAGE,
  WINDOWS_PAGE,
  windowsApiUrl,
  windowsQueryKey,
} from "@/lib/features/reconciliation/reconciliation-types";
import { fetchJson } from "../api/fetch-json";
import { REFRESH_MS } from "../ui/describe-api-error";
import { QueryStates } from "../ui/query-state";
import { BulkAcknowledgePanel } from "./bulk-acknowledge-panel";
import { FindingDetail, NoFindingOpen } from "./finding-detail";
import { FindingFilters } from "./finding-filters";
import { type FindingsBasis, FindingsTable } from "./findings-table";
import { ProviderSetupNotice } from "./provider-setup-notice";
import { RunWindows } from "./run-windows";

/** What an empty list of findings rests on: a completed run, or nothing compared at all (and why). */
function findingsBasis(setup: ProviderSetup, windows: ReconciliationWindowListResponse[] | undefined): FindingsBasis {
  const latest = windows?.flatMap((page) => page.windows.map((w) => w.latest));
  if (latest?.some((run) => run.status === "completed")) return "reconciled";
  if (!anyProviderConfigured(setup)) return "unconfigured";
  return latest && latest.length > 0 ? "none-completed" : "never-run";
}

/**
 * The Reconciliation page's body, for the on-call question "did what ran once here happen once
 * there?": the windows the runs covered (each once, reruns folded; refreshed while one runs), the
 * findings for the URL's filters with, for operators, acknowledging every open one they match, and
 * the finding the URL opens beside the list (below it on a phone), where it stays in view. The
 * first page of windows and the findings were prefetched on the server with the session's scope
 * under these query keys.
 */
export function ReconciliationView({
  filters,
  platform,
  role,
  setup,
}: {
  filters: Filters;
  platform: boolean;
  role: Role;
  /** Which providers are configured here (server-side config): an empty list is not agreement without one. */
  setup: ProviderSetup;
}) {
  const windows = useInfiniteQuery({
    queryKey: windowsQueryKey(),
    queryFn: ({ pageParam, signal }) =>
      fetchJson<ReconciliationWindowListResponse>(
        windowsApiUrl(pageParam, pageParam === null ? WINDOWS_FIRST_PAGE : WINDOWS_PAGE),
        signal,
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    refetchInterval: (query) =>
      query.state.data?.pages.some((page) => page.windows.some((w) => w.latest.status === "running")) ? REFRESH_MS : false,
  });
  const url = findingsApiUrl(filters);
  const findings = useQuery({
    queryKey: findingsQueryKey(url),
    queryFn: ({ signal }) => fetchJson<FindingListResponse>(url, signal),
    placeholderData: keepPreviousData,
  });
  const labels = Object.fromEntries(setup.providers.map((p) => [p.name, p.label]));
  const providerLabel = (name: string) => labels[name] ?? name;
  // Beside the list from a desktop's width: the pane is there while no finding is open too, so
  // opening one does not narrow the list and move the row that was clicked.
  const paned = Boolean(filters.finding) || (findings.data?.findings.length ?? 0) > 0;

  return (
    <div className="reconciliation">
      <ProviderSetupNotice setup={setup} />
      <QueryStates query={windows} what="the reconciliation runs" skeleton={<p role="status">Loading runs…</p>}>
        {(data) => (
          <RunWindows
            windows={data.pages.flatMap((page) => page.windows)}
            configured={anyProviderConfigured(setup)}
            labels={labels}
            more={
              windows.hasNextPage ? { load: () => void windows.fetchNextPage(), loading: windows.isFetchingNextPage } : undefined
            }
          />
        )}
      </QueryStates>
      <FindingFilters filters={filters} platform={platform} />
      {role !== "viewer" && (filters.state ?? "open") === "open" ? (
        <BulkAcknowledgePanel key={findingsApiUrl({ ...filters, cursor: null })} filters={filters} platform={platform} />
      ) : null}
      <div className={paned ? "findings-layout findings-layout-open" : "findings-layout"} data-testid="findings-layout">
        <div className="findings-column">
          <QueryStates query={findings} what="the findings" skeleton={<p role="status">Loading findings…</p>}>
            {(data) => <FindingsTable list={data} filters={filters} basis={findingsBasis(setup, windows.data?.pages)} />}
          </QueryStates>
        </div>
        {filters.finding ? (
          <FindingDetail key={filters.finding} id={filters.finding} filters={filters} role={role} providerLabel={providerLabel} />
        ) : paned ? (
          <NoFindingOpen />
        ) : null}
      </div>
    </div>
  );
}
