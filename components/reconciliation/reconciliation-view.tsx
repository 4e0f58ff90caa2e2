"use client";

import { keepPreviousData, useQuery } from "@tanstack/react-query";
import type { Role } from "@/lib/auth/auth-types";
import type {
  FindingListResponse,
  ReconciliationRun,
  ReconciliationRunListResponse,
} from "@/lib/features/reconciliation/contract";
import { anyProviderConfigured, type ProviderSetup } from "@/lib/features/reconciliation/provider-setup-types";
import {
  type FindingFilters as Filters,
  findingsApiUrl,
  findingsQueryKey,
  RUNS_API_URL,
  runsQueryKey,
} from "@/lib/features/reconciliation/reconciliation-types";
import { fetchJson } from "../api/fetch-json";
import { REFRESH_MS } from "../ui/describe-api-error";
import { QueryStates } from "../ui/query-state";
import { BulkAcknowledgePanel } from "./bulk-acknowledge-panel";
import { FindingDetail } from "./finding-detail";
import { FindingFilters } from "./finding-filters";
import { type FindingsBasis, FindingsTable } from "./findings-table";
import { ProviderSetupNotice } from "./provider-setup-notice";
import { RunsTable } from "./runs-table";

/** What an empty list of findings rests on: a completed run, or nothing compared at all (and why). */
function findingsBasis(setup: ProviderSetup, runs: ReconciliationRun[] | undefined): FindingsBasis {
  if (runs?.some((run) => run.status === "completed")) return "reconciled";
  if (!anyProviderConfigured(setup)) return "unconfigured";
  return runs && runs.length > 0 ? "none-completed" : "never-run";
}

/**
 * The Reconciliation page's body: the runs (refreshed while one is running), the findings for the
 * URL's filters (with, for operators, acknowledging every open one they match), and the finding
 * the URL opens, beside them. Both lists were prefetched on the
 * server with the session's scope under these query keys.
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
      <ProviderSetupNotice setup={setup} />
      <QueryStates query={runs} what="the reconciliation runs" skeleton={<p role="status">Loading runs…</p>}>
        {(data) => <RunsTable runs={data.runs} configured={anyProviderConfigured(setup)} />}
      </QueryStates>
      <FindingFilters filters={filters} platform={platform} />
      {role !== "viewer" && (filters.state ?? "open") === "open" ? (
        <BulkAcknowledgePanel key={findingsApiUrl({ ...filters, cursor: null })} filters={filters} platform={platform} />
      ) : null}
      <div className={filters.finding ? "findings-layout findings-layout-open" : "findings-layout"}>
        <div>
          <QueryStates query={findings} what="the findings" skeleton={<p role="status">Loading findings…</p>}>
            {(data) => <FindingsTable list={data} filters={filters} basis={findingsBasis(setup, runs.data?.runs)} />}
          </QueryStates>
        </div>
        {filters.finding ? <FindingDetail key={filters.finding} id={filters.finding} filters={filters} role={role} /> : null}
      </div>
    </div>
  );
}
