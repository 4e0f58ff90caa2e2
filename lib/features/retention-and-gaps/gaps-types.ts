/**
 * The Delivery gaps page's ranges and query key, and the types of GET /api/v1/gaps (schemas in
 * lib/features/retention-and-gaps/gaps-contract.ts; types and constants only: safe to import from client code).
 */
export const GAP_RANGES = ["1h", "6h", "24h", "7d", "30d"] as const;
export type GapRange = (typeof GAP_RANGES)[number];
export const DEFAULT_GAP_RANGE: GapRange = "30d";
export const GAP_RANGE_SECONDS: Record<GapRange, number> = {
  "1h": 3600,
  "6h": 21_600,
  "24h": 86_400,
  "7d": 604_800,
  "30d": 2_592_000,
};
export const GAP_RANGE_LABELS: Record<GapRange, string> = {
  "1h": "Last hour",
  "6h": "Last 6 hours",
  "24h": "Last 24 hours",
  "7d": "Last 7 days",
  "30d": "Last 30 days",
};
/** The longest custom from/to span the page accepts (bounded queries). */
export const MAX_GAP_SPAN_SECONDS = 90 * 86_400;

/** The TanStack Query key of the page's data (the server prefetches under the same key). */
export const gapsQueryKey = (search: string) => ["gaps", search] as const;
