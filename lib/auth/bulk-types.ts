/** Bulk actions as the Keys page and /api/v1/bulk show them. */
export const BULK_ACTION_KINDS = ["release_stuck_claims"] as const;
export type BulkActionKind = (typeof BULK_ACTION_KINDS)[number];

export const BULK_ACTION_STATES = ["queued", "running", "done", "cancelled", "failed"] as const;
export type BulkActionState = (typeof BULK_ACTION_STATES)[number];

/** The Keys page's filter, as a bulk release takes it: stuck claims of one tenant, by key fragment and job type. */
export interface BulkReleaseFilter {
  q: string | null;
  jobType: string | null;
}

export interface StuckClaimSample {
  key: string;
  jobType: string;
  attempt: number;
  owner: string | null;
  leaseUntil: string;
}

/** POST /api/v1/bulk/release with dryRun: what would be released, and whether the cap allows it. */
export interface BulkDryRunResponse {
  dryRun: true;
  tenant: string;
  /** How many stuck claims match (counted up to cap + 1: "more than the cap" is all that matters past it). */
  count: number;
  cap: number;
  overCap: boolean;
  sample: StuckClaimSample[];
}

export interface BulkActionView {
  id: string;
  kind: BulkActionKind;
  tenant: string;
  filter: BulkReleaseFilter;
  state: BulkActionState;
  total: number;
  processed: number;
  /** Items the action did (released); processed − applied were refused (e.g. a worker took the claim over meanwhile). */
  applied: number;
  actor: string;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  cancelledBy: string | null;
  error: string | null;
}

export interface BulkActionResponse {
  action: BulkActionView;
}

export const bulkActionQueryKey = (id: string) => ["bulk-action", id];
/** Terminal states: the page stops polling. */
export const BULK_ACTION_FINISHED: readonly BulkActionState[] = ["done", "cancelled", "failed"];
