/**
 * The Overview's JSON shape, shared by the read model, the route handler and the React components
 * (types and constants only: safe to import from client code).
 */
export const OVERVIEW_WINDOWS = ["1h", "24h", "7d"] as const;
export type OverviewWindow = (typeof OVERVIEW_WINDOWS)[number];
export const DEFAULT_OVERVIEW_WINDOW: OverviewWindow = "24h";

export const WINDOW_SECONDS: Record<OverviewWindow, number> = { "1h": 3600, "24h": 86_400, "7d": 604_800 };
export const WINDOW_LABELS: Record<OverviewWindow, string> = { "1h": "Last hour", "24h": "Last 24 hours", "7d": "Last 7 days" };

export const EFFECT_STATUSES = ["in_progress", "completed", "failed", "abandoned"] as const;
export type EffectStatus = (typeof EFFECT_STATUSES)[number];

export type StatusCounts = Record<EffectStatus, number>;

export interface JobTypeOverview {
  jobType: string;
  /** Effects created in the window, by status, from the effects table. */
  effects: StatusCounts & { total: number };
  /** In progress with an expired lease: a worker probably crashed holding the claim. */
  stuck: number;
  /** From worker_stats_minute: deliveries that claimed an effect. */
  claims: number;
  /** From worker_stats_minute: duplicate deliveries suppressed (the mechanism doing its work). */
  duplicateSuppressions: number;
  /** From uncaught_violations_minute: unique violations a handler raised itself (a bug in its guard). */
  uncaughtViolations: number;
}

export interface UncaughtViolationRow {
  jobType: string;
  constraintName: string;
  count: number;
  lastSeenAt: string;
}

export interface Overview {
  window: OverviewWindow;
  /** Inclusive lower bound of the window (ISO 8601). */
  from: string;
  /** Exclusive upper bound: when the question was asked (ISO 8601). */
  to: string;
  totals: StatusCounts & {
    effects: number;
    stuck: number;
    claims: number;
    duplicateSuppressions: number;
    uncaughtViolations: number;
  };
  jobTypes: JobTypeOverview[];
  uncaughtViolations: UncaughtViolationRow[];
}
