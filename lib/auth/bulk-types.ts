import type { z } from "zod";
import type { bulkActionResponse, bulkActionView, bulkDryRunResponse, stuckClaimSample } from "../contract/bulk";

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

/** What /api/v1/bulk answers, inferred from the contract (lib/contract/bulk.ts). */
export type StuckClaimSample = z.infer<typeof stuckClaimSample>;
/** POST /api/v1/bulk/release with dryRun: what would be released, and whether the cap allows it. */
export type BulkDryRunResponse = z.infer<typeof bulkDryRunResponse>;
export type BulkActionView = z.infer<typeof bulkActionView>;
export type BulkActionResponse = z.infer<typeof bulkActionResponse>;

export const bulkActionQueryKey = (id: string) => ["bulk-action", id];
/** Terminal states: the page stops polling. */
export const BULK_ACTION_FINISHED: readonly BulkActionState[] = ["done", "cancelled", "failed"];
