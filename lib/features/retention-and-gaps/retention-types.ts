/**
 * The Retention page's constants and query keys, and the types of what /api/v1/retention/* return
 * (schemas in lib/features/retention-and-gaps/contract.ts; JSON: dates as ISO strings).
 */

/** The first element of every Retention query key: `[RETENTION_QUERY_ROOT]` matches every view. */
export const RETENTION_QUERY_ROOT = "retention";
/**
 * The TanStack Query key of the Retention page: prefetched on the server, polled on the client.
 * `search` is the page's canonical query string (?runs=).
 */
export const retentionQueryKey = (search: string) => [RETENTION_QUERY_ROOT, search] as const;

export { PARTITION_INTERVALS, type PartitionInterval as PartitionIntervalName } from "../../idempotency/states";
