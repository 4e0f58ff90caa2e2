/**
 * One step of a maintenance run as maintain() reports it and maintenance_runs stores it. Its own
 * module: maintain() and the timeline's partition sync (maintenance-timeline.ts) both append them,
 * and neither imports the other's module for it.
 */
export type OperationKind = "create" | "detach" | "finalize" | "drop" | "reattach" | "index" | "prune";
export interface Operation {
  kind: OperationKind;
  partition: string;
  result: "ok" | "failed" | "skipped";
  detail?: string;
}
