/** What the Retention page and /api/v1/retention/* return (JSON: dates as ISO strings). */

/** The first element of every Retention query key: `[RETENTION_QUERY_ROOT]` matches every view. */
export const RETENTION_QUERY_ROOT = "retention";
/**
 * The TanStack Query key of the Retention page: prefetched on the server, polled on the client.
 * `search` is the page's canonical query string (?runs=).
 */
export const retentionQueryKey = (search: string) => [RETENTION_QUERY_ROOT, search] as const;

export const PARTITION_INTERVALS = ["hour", "day", "week"] as const;
export type PartitionIntervalName = (typeof PARTITION_INTERVALS)[number];

export interface RetentionSettingsView {
  retentionDays: number;
  maxRetryWindowDays: number;
  partitionInterval: PartitionIntervalName;
  premakeCount: number;
  updatedAt: string | null;
  updatedBy: string | null;
}

export interface PartitionView {
  name: string;
  from: string | null;
  to: string | null;
  estimatedRows: number;
  bytes: number;
  /** In-progress claims with a live lease; null when not counted (too new to expire). */
  liveClaims: number | null;
  detachPending: boolean;
  action: "keep" | "drop" | "finalize";
  guard: "retention" | "retry-window" | "in-flight" | "newest" | "current" | null;
  reason: string;
}

export interface PlanView {
  now: string;
  keepSeconds: number;
  dropBefore: string;
  runwayHours: number;
  create: { name: string; from: string; to: string; reason: "ahead" | "missing" }[];
  partitions: PartitionView[];
  orphans: string[];
  /** Closed partitions whose Keys index the next run builds (CREATE INDEX CONCURRENTLY), and why. */
  index: { partition: string; index: string; invalid: string[]; reason: string }[];
}

export interface LiveWorkerView {
  workerId: string;
  maxRetryWindowSeconds: number;
  host: string | null;
  pid: number | null;
  heartbeatAt: string;
}

export interface MaintenanceRunView {
  id: string;
  runner: string;
  trigger: string;
  startedAt: string;
  finishedAt: string | null;
  result: string;
  operations: { kind: string; partition: string; result: string; detail?: string }[];
  error: string | null;
}

export interface RetentionView {
  settings: RetentionSettingsView;
  /**
   * Null for a tenant token: partitions hold every tenant's effects, so their row counts, the plan,
   * the live workers and the maintenance runs (empty too) are shown to platform tokens only.
   */
  plan: PlanView | null;
  liveWorkers: LiveWorkerView[];
  /** Largest redelivery gap seen on the reader's effects (a tenant's own; the platform: any effect). */
  observedMaxGapSeconds: number | null;
  runs: MaintenanceRunView[];
}

export interface ApplyResultView {
  result: "success" | "failed" | "skipped";
  runId: string | null;
  operations: { kind: string; partition: string; result: string; detail?: string }[];
  error?: string;
}

export interface SettingsUpdateView {
  settings: RetentionSettingsView;
  warnings: string[];
}
