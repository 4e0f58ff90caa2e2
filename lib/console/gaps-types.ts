import type { Advice } from "../retention/advice-types";

/**
 * The Delivery gaps page's JSON shape, shared by the read model, the route handler and the React
 * components (types and constants only: safe to import from client code).
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

export interface GapStats {
  samples: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
  p999: number | null;
  /** The largest gap is longer than this (lower bound of the highest non-empty bucket)… */
  maxAtLeast: number | null;
  /** …and at most this (its upper bound; null when open-ended). */
  maxAtMost: number | null;
  /** Gaps in the open-ended top bucket. */
  overflow: number;
  /** Gaps certainly longer than the current retention. */
  beyondRetention: number;
}

export interface GapSeries {
  name: string;
  /** One count per bucket of `bounds`, then the open-ended bucket. */
  buckets: number[];
  stats: GapStats;
}

export interface TenantGaps extends GapSeries {
  /** Effects whose largest gap exceeds the largest declared retry window. */
  late: number;
  maxGapSeconds: number | null;
}

export interface GapDay {
  /** UTC midnight (ISO 8601). */
  day: string;
  samples: number;
  p99: number | null;
  /** Upper bound of the day's highest non-empty bucket (null: none, or open-ended). */
  maxAtMost: number | null;
  maxAtLeast: number | null;
}

export interface LateDuplicate {
  tenant: string;
  key: string;
  jobType: string;
  gapSeconds: number;
  at: string;
}

export interface Gaps {
  range: GapRange | "custom";
  from: string;
  to: string;
  jobType: string | null;
  tenant: string | null;
  /**
   * rollups: worker_stats_minute (every duplicate's gap, all tenants). effects: per-effect largest
   * gaps from the effects table (a tenant filter: the rollups have no tenant dimension).
   */
  source: "rollups" | "effects";
  bounds: number[];
  retentionSeconds: number;
  maxRetryWindowSeconds: number;
  maxRetryWindowSource: string;
  /** "Late" in the tenant ranking and the latest-late list: a gap beyond the largest declared retry window. */
  lateThresholdSeconds: number;
  all: GapSeries;
  jobTypes: GapSeries[];
  tenants: TenantGaps[];
  daily: GapDay[];
  latestLate: LateDuplicate[];
  effectsMaxGap: { seconds: number; jobType: string; tenant: string; key: string } | null;
  claimsBeyondRetention: number;
  advice: Advice;
  /** Job types with gap data in the last 90 days (the filter's choices). */
  jobTypeOptions: string[];
}

/** The TanStack Query key of the page's data (the server prefetches under the same key). */
export const gapsQueryKey = (search: string) => ["gaps", search] as const;
