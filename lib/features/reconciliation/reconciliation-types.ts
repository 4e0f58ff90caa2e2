import { FINDING_KINDS, type FindingKind } from "../../reconciliation/finding-types";

export { FINDING_KINDS, type FindingKind };

/** What an operator did about a finding (the CHECK of reconciliation_findings.state). */
export const FINDING_STATES = ["open", "acknowledged", "resolved"] as const;
export type FindingState = (typeof FINDING_STATES)[number];

/** The state changes an operator may make, and the state each leads to. */
export const FINDING_ACTIONS = { acknowledge: "acknowledged", resolve: "resolved" } as const;
export type FindingAction = keyof typeof FINDING_ACTIONS;

export const RUN_STATUSES = ["running", "completed", "failed"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** How each kind reads on the page. */
export const FINDING_KIND_LABELS: Record<FindingKind, string> = {
  duplicated_at_provider: "duplicated at provider",
  missing_at_provider: "missing at provider",
  unknown_to_onceboard: "unknown to Onceboard",
  drift: "drift",
  pending: "pending",
};

/** The page's filters, as its URL carries them. */
export interface FindingFilters {
  tenant?: string | null;
  kind?: string | null;
  provider?: string | null;
  jobType?: string | null;
  state?: string | null;
  from?: string | null;
  to?: string | null;
  cursor?: string | null;
  limit?: string | null;
  finding?: string | null;
}

const FILTER_NAMES = ["tenant", "kind", "provider", "jobType", "state", "from", "to", "limit", "cursor", "finding"] as const;

/** The filters as a query string (no leading "?"), in one order, so equal filters make one query key. */
export function findingSearch(filters: FindingFilters): string {
  const search = new URLSearchParams();
  for (const name of FILTER_NAMES) {
    const value = filters[name];
    if (value) search.set(name, value);
  }
  return search.toString();
}

/** The Reconciliation page for these filters (and, with `finding`, that finding's detail open). */
export function reconciliationHref(filters: FindingFilters = {}): string {
  const text = findingSearch(filters);
  return text ? `/reconciliation?${text}` : "/reconciliation";
}

/** The API's list of findings for the page's filters (the detail's `finding` is not a list filter). */
export function findingsApiUrl(filters: FindingFilters): string {
  const text = findingSearch({ ...filters, finding: null });
  return text ? `/api/v1/reconciliation/findings?${text}` : "/api/v1/reconciliation/findings";
}

export const findingApiUrl = (id: string) => `/api/v1/reconciliation/findings/${encodeURIComponent(id)}`;

/** The windows the Reconciliation page shows first: the latest few, so the findings below stay near the top. */
export const WINDOWS_FIRST_PAGE = 5;
/** Each further page of windows ("Older windows"). */
export const WINDOWS_PAGE = 20;

/** The windows, each by its latest run (the Reconciliation page's first section); a cursor pages on. */
export function windowsApiUrl(cursor: string | null | undefined, limit: number): string {
  const search = new URLSearchParams({ limit: String(limit) });
  if (cursor) search.set("cursor", cursor);
  return `/api/v1/reconciliation/windows?${search}`;
}

/** The first page of an infinite list as its query's data (what the server prefetches for useInfiniteQuery). */
export const asFirstPage = <T>(page: T) => ({ pages: [page], pageParams: [null as string | null] });

/** One provider window's runs, newest first (its reruns, unfolded under the latest). */
export function windowRunsApiUrl(window: { provider: string; windowFrom: string; windowTo: string }, cursor?: string | null) {
  const search = new URLSearchParams({ provider: window.provider, windowFrom: window.windowFrom, windowTo: window.windowTo });
  if (cursor) search.set("cursor", cursor);
  return `/api/v1/reconciliation/runs?${search}`;
}

/** The first element of every reconciliation query key: a state change invalidates them all. */
export const RECONCILIATION_QUERY_ROOT = "reconciliation";
export const windowsQueryKey = () => [RECONCILIATION_QUERY_ROOT, "windows"] as const;
export const windowRunsQueryKey = (window: { provider: string; windowFrom: string; windowTo: string }) =>
  [RECONCILIATION_QUERY_ROOT, "window-runs", window.provider, window.windowFrom, window.windowTo] as const;
export const findingsQueryKey = (url: string) => [RECONCILIATION_QUERY_ROOT, "findings", url] as const;
export const findingQueryKey = (id: string) => [RECONCILIATION_QUERY_ROOT, "finding", id] as const;
