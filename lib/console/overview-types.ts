/**
 * The Overview's JSON shape, shared by the read model, the route handler and the React components
 * (types and constants only: safe to import from client code).
 */

import type { ViolationGroup } from "./violations-types";
/** The windows the browser tests' seed states its expectations for (lib/console/testing/seed-overview.ts). */
export const OVERVIEW_WINDOWS = ["1h", "24h", "7d"] as const;
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

export type MetricsSourceName = "postgres" | "prometheus";

/** One line of a chart: a value per timestamp of OverviewSeries.timestamps. */
export interface Series {
  name: string;
  values: (number | null)[];
}

export interface ViolationSeries extends Series {
  jobType: string;
  constraint: string;
}

export interface OverviewSeries {
  /** Seconds per point; each point counts the events in (t - step, t]. */
  stepSeconds: number;
  /** End of each bucket, epoch milliseconds. */
  timestamps: number[];
  /** Duplicate suppressions per bucket, one series per job type (stacked in the chart). */
  suppressions: Series[];
  /** Uncaught unique violations per bucket, one series per job type and constraint. */
  violations: ViolationSeries[];
  /** Claims per second, all job types (or the one filtered). */
  claimRate: (number | null)[];
  /** Claim latency quantiles, seconds (null where no claim happened). */
  latencyP50: (number | null)[];
  latencyP99: (number | null)[];
  /** In-flight waits and lease takeovers per bucket. */
  inFlight: (number | null)[];
  takeovers: (number | null)[];
}

export interface JobTypeActivity {
  jobType: string;
  deliveries: number;
  redeliveries: number;
  suppressions: number;
  claims: number;
  uncaughtViolations: number;
  /** Redeliveries above zero and suppressions zero over the range: the guard is probably missing. */
  notWiredUp: boolean;
}

export interface TenantRow {
  tenant: string;
  suppressions: number;
  violations: number;
  stuck: number;
}

export interface StuckClaim {
  tenant: string;
  key: string;
  jobType: string;
  attempt: number;
  owner: string | null;
  createdAt: string;
  leaseUntil: string;
  /** Seconds since the claim was created. */
  ageSeconds: number;
  /** Seconds since its lease ran out. */
  overdueSeconds: number;
}

export type AlertStateName = "firing" | "pending" | "inactive" | "unknown";

export interface AlertStatus {
  name: string;
  state: AlertStateName;
  severity: string;
  summary: string;
  /** Label sets of the firing/pending instances (e.g. job_type). */
  instances: { labels: Record<string, string>; state: AlertStateName; value: number | null }[];
  /** docs/operations.md section for this alert. */
  runbook: string;
  /** Why the state is unknown (e.g. the rollups cannot see this metric). */
  note?: string;
}

export interface OverviewResponse {
  source: MetricsSourceName;
  /** The preset, or null for a custom from/to. */
  range: OverviewRange | null;
  from: string;
  to: string;
  jobType: string | null;
  /** False when `jobType` names a job type no worker ever reported (a typo in the URL, most likely). */
  jobTypeKnown: boolean;
  tenant: string | null;
  series: OverviewSeries;
  /** Which parts honour ?tenant= (the rest are for every tenant: the rollups carry no tenant); each part says which it is. */
  tenantScoped: string[];
  jobTypes: JobTypeActivity[];
  topTenants: TenantRow[];
  stuck: StuckClaim[];
  /** Uncaught violations per (tenant, job type, constraint) in the range; each group's keys are on the Violations page. */
  violationGroups: ViolationGroup[];
  alerts: AlertStatus[];
  alertsSource: MetricsSourceName;
  /** Totals over the range, for the tiles; `effects` counts rows created in the range. */
  totals: {
    deliveries: number;
    redeliveries: number;
    claims: number;
    suppressions: number;
    uncaughtViolations: number;
    stuck: number;
  };
  /** Sentences explaining numbers that cannot agree (e.g. per-tenant data is hourly). */
  notes: string[];
}

/**
 * Upper bounds (s) of the claim-duration histogram (idem_claim_duration_seconds; claim_latency_minute).
 * The library's CLAIM_DURATION_BUCKETS, copied because this module reaches the browser and the
 * library's entry point does not; lib/console/library-constants.test.ts keeps the two equal.
 */
export const CLAIM_DURATION_BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

/** The TanStack Query key the Overview page prefetches on the server and polls on the client. */
export const overviewQueryKey = (apiQuery: string) => [OVERVIEW_QUERY_ROOT, apiQuery] as const;
/** The first element of every Overview query key (writes that change its numbers invalidate them all). */
export const OVERVIEW_QUERY_ROOT = "overview";
