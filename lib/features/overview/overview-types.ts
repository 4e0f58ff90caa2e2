/**
 * The Overview's ranges, bounds and query key, and the types of GET /api/v1/overview (schemas in
 * lib/features/overview/contract.ts; types and constants only: safe to import from client code).
 */

/** The windows the browser tests' seed states its expectations for (lib/features/overview/testing/seed-overview.ts). */
const OVERVIEW_WINDOWS = ["1h", "24h", "7d"] as const;
export type OverviewWindow = (typeof OVERVIEW_WINDOWS)[number];

// ---- The on-call Overview: time series, tenants, stuck claims, alerts.

/** Preset ranges of the Overview; `from`/`to` give a custom one. */
export const OVERVIEW_RANGES = ["15m", "1h", "6h", "24h", "7d", "30d"] as const;
export type OverviewRange = (typeof OVERVIEW_RANGES)[number];
export const DEFAULT_OVERVIEW_RANGE: OverviewRange = "24h";
export const RANGE_SECONDS: Record<OverviewRange, number> = {
  "15m": 900,
  "1h": 3600,
  "6h": 21_600,
  "24h": 86_400,
  "7d": 604_800,
  "30d": 2_592_000,
};
export const RANGE_LABELS: Record<OverviewRange, string> = {
  "15m": "Last 15 minutes",
  "1h": "Last hour",
  "6h": "Last 6 hours",
  "24h": "Last 24 hours",
  "7d": "Last 7 days",
  "30d": "Last 30 days",
};
/** Prometheus query_range refuses more than 11,000 points per series. */
export const MAX_POINTS = 11_000;
export const DEFAULT_CHART_WIDTH = 720;

/** Upper bounds (s) of the claim-duration histogram (idem_claim_duration_seconds; claim_latency_minute). */
export { CLAIM_DURATION_BUCKETS as CLAIM_DURATION_BOUNDS } from "../../idempotency/states";

/** The TanStack Query key the Overview page prefetches on the server and polls on the client. */
export const overviewQueryKey = (apiQuery: string) => [OVERVIEW_QUERY_ROOT, apiQuery] as const;
/** The first element of every Overview query key (writes that change its numbers invalidate them all). */
export const OVERVIEW_QUERY_ROOT = "overview";
