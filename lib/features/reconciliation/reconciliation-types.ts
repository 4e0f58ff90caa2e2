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
export const RUNS_API_URL = "/api/v1/reconciliation/runs";

/** The first element of every reconciliation query key: a state change invalidates them all. */
export const RECONCILIATION_QUERY_ROOT = "reconciliation";
export const runsQueryKey = () => [RECONCILIATION_QUERY_ROOT, "runs"] as const;
export const findingsQueryKey = (url: string) => [RECONCILIATION_QUERY_ROOT, "findings", url] as const;
export const findingQueryKey = (id: string) => [RECONCILIATION_QUERY_ROOT, "finding", id] as const;
