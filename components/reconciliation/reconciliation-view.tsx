"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { Role } from "@/lib/auth/auth-types";
import {
  type FindingFilters as Filters,
  type FindingListResponse,
  findingsApiUrl,
  findingsQueryKey,
  type ReconciliationRunListResponse,
  RUNS_API_URL,
  runsQueryKey,
} from "@/lib/console/reconciliation-types";
import { fetchJson } from "../api/fetch-json";
import { REFRESH_MS } from "../ui/describe-api-error";
import { QueryStates } from "../ui/query-state";
import { BulkAcknowledgePanel } from "./bulk-acknowledge-panel";
import { FindingDetail } from "./finding-detail";
import { FindingFilters } from "./finding-filters";
import { FindingsTable } from "./findings-table";
import { RunsTable } from "./runs-table";

/**
 * The Reconciliation page's body: the runs (refreshed while one is running), the findings for the
 * URL's filters (with, for operators, acknowledging every open one they match), and the finding
 * the URL opens, beside them. Both lists were prefetched on the
 * server with the session's scope under these query keys.
 */
export function ReconciliationView({ filters, platform, role }: { filters: Filters; platform: boolean; role: Role }) {
  const runs = useQuery({
    queryKey: runsQueryKey(),
    queryFn: ({ signal }) => fetchJson<ReconciliationRunListResponse>(RUNS_API_URL, signal),
    refetchInterval: (query) => (query.state.data?.runs.some((r) => r.status === "running") ? REFRESH_MS : false),
  });
  const url = findingsApiUrl(filters);
  const findings = useQuery({
    queryKey: findingsQueryKey(url),
    queryFn: ({ signal }) => fetchJson<FindingListResponse>(url, signal),
    placeholderData: keepPreviousData,
  });
  return (
    <div className="reconciliation">
      <QueryStates query={runs} what="the reconciliation runs" skeleton={<p role="status">Loading runs…</p>}>
        {(data) => <RunsTable runs={data.runs} />}
      </QueryStates>
      <FindingFilters filters={filters} platform={platform} />
      {role !== "viewer" && (filters.state ?? "open") === "open" ? (
        <BulkAcknowledgePanel key={findingsApiUrl({ ...filters, cursor: null })} filters={filters} platform={platform} />
      ) : null}
      <div className={filters.finding ? "findings-layout findings-layout-open" : "findings-layout"}>
        <div>
          <QueryStates query={findings} what="the findings" skeleton={<p role="status">Loading findings…</p>}>
            {(data) => <FindingsTable list={data} filters={filters} />}
          </QueryStates>
        </div>
        {filters.finding ? <FindingDetail key={filters.finding} id={filters.finding} filters={filters} role={role} /> : null}
      </div>
    </div>
  );
}
