import type { FindingKind } from "../reconciliation/reconciliation-types";

/**
 * Bulk actions as the Keys and Reconciliation pages and /api/v1/bulk show them: releasing the
 * stuck claims the Keys page's filter matches, acknowledging the open findings the Reconciliation
 * page's filter matches.
 */
export const BULK_ACTION_KINDS = ["release_stuck_claims", "acknowledge_findings"] as const;
export type BulkActionKind = (typeof BULK_ACTION_KINDS)[number];

export const BULK_ACTION_STATES = ["queued", "running", "done", "cancelled", "failed"] as const;
export type BulkActionState = (typeof BULK_ACTION_STATES)[number];

/** The Keys page's filter, as a bulk release takes it: stuck claims of one tenant, by key fragment and job type. */
export interface BulkReleaseFilter {
  q: string | null;
  jobType: string | null;
}

/** The Reconciliation page's filter, as a bulk acknowledge takes it: open findings by kind, provider, job type and last seen. */
export interface BulkFindingsFilter {
  kind: FindingKind | null;
  provider: string | null;
  jobType: string | null;
  from: Date | null;
  to: Date | null;
}

/** Each kind's filter. */
export interface BulkFilters {
  release_stuck_claims: BulkReleaseFilter;
  acknowledge_findings: BulkFindingsFilter;
}

/** An item's status: "ok" outcomes are applied, any other outcome is the guard's refusal. */
export const BULK_ITEM_STATUSES = ["pending", "applied", "refused"] as const;
export type BulkItemStatus = (typeof BULK_ITEM_STATUSES)[number];

export const bulkActionQueryKey = (id: string) => ["bulk-action", id];

/** How many items the bulk progress panel shows at once. */
export const BULK_ITEMS_PANEL_SIZE = 20;

/** The URL the bulk progress panel reads a page of items from; `cursor` absent: the first page. */
export function bulkItemsUrl(id: string, cursor: string | null): string {
  const search = new URLSearchParams({ limit: String(BULK_ITEMS_PANEL_SIZE) });
  if (cursor) search.set("cursor", cursor);
  return `/api/v1/bulk/${encodeURIComponent(id)}/items?${search}`;
}

export const bulkItemsQueryKey = (id: string, cursor: string | null) => ["bulk-action", id, "items", cursor];
/** Terminal states: the page stops polling. */
export const BULK_ACTION_FINISHED: readonly BulkActionState[] = ["done", "cancelled", "failed"];
