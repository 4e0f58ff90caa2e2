import type { Counter, Gauge, Metric, Registry } from "prom-client";
import { requirePromClient } from "./prom";
import { type PartitionInterval, partitionIntervalSeconds } from "./states";

/**
 * The partition manager's metrics. Registered on the same registry as the idem_* claim metrics,
 * so a worker that runs maintenance exposes them on its /metrics, and the console on its own.
 */
export interface MaintenanceMetrics {
  /** Hours from now to the end of the contiguous premade partitions (the runway). */
  runwayHours: Gauge<string>;
  /** Unix time at which the contiguous premade partitions end (alerting compares it with time()). */
  runwayEnd: Gauge<string>;
  /** The partition interval in seconds (the runway alert fires below two of them). */
  intervalSeconds: Gauge<string>;
  /** Unix time of the last successful run. */
  lastSuccess: Gauge<string>;
  operations: Counter<"kind" | "result">;
  runs: Counter<"result">;
}

function reuse<M extends Metric>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

export function maintenanceMetrics(registry: Registry): MaintenanceMetrics {
  const { Counter, Gauge } = requirePromClient("maintenance metrics");
  return {
    runwayHours: reuse(
      registry,
      "idem_partition_runway_hours",
      () =>
        new Gauge({
          name: "idem_partition_runway_hours",
          help: "Hours from now to the end of the effects partitions premade ahead (contiguous), as of the last maintenance run.",
          registers: [registry],
        }),
    ),
    runwayEnd: reuse(
      registry,
      "idem_partition_runway_end_timestamp_seconds",
      () =>
        new Gauge({
          name: "idem_partition_runway_end_timestamp_seconds",
          help: "Unix time at which the contiguous premade effects partitions end, as of the last maintenance run.",
          registers: [registry],
        }),
    ),
    intervalSeconds: reuse(
      registry,
      "idem_partition_interval_seconds",
      () =>
        new Gauge({
          name: "idem_partition_interval_seconds",
          help: "The effects partition interval (hour, day or week) in seconds, from the retention settings.",
          registers: [registry],
        }),
    ),
    lastSuccess: reuse(
      registry,
      "idem_maintenance_last_success_timestamp_seconds",
      () =>
        new Gauge({
          name: "idem_maintenance_last_success_timestamp_seconds",
          help: "Unix time of the last successful partition maintenance run of this process.",
          registers: [registry],
        }),
    ),
    operations: reuse(
      registry,
      "idem_maintenance_operations_total",
      () =>
        new Counter({
          name: "idem_maintenance_operations_total",
          help: "Partition maintenance operations (create, detach, finalize, drop, reattach, index) by result.",
          labelNames: ["kind", "result"],
          registers: [registry],
        }),
    ),
    runs: reuse(
      registry,
      "idem_maintenance_runs_total",
      () =>
        new Counter({
          name: "idem_maintenance_runs_total",
          help: "Partition maintenance runs by result (success, failed); skipped runs (lock held elsewhere) are not counted.",
          labelNames: ["result"],
          registers: [registry],
        }),
    ),
  };
}

/**
 * Claims refused because no partition covers now(): counted on its own (not only as a claim
 * result) because it means the runway ran out, which is an alert.
 */
export function partitionMissingCounter(registry: Registry): Counter<"job_type"> {
  const { Counter } = requirePromClient("metrics");
  return reuse(
    registry,
    "idem_partition_missing_errors_total",
    () =>
      new Counter({
        name: "idem_partition_missing_errors_total",
        help: "Claims that failed with PartitionMissingError: no effects partition covers now().",
        labelNames: ["job_type"],
        registers: [registry],
      }),
  );
}

/**
 * What a finished run leaves on the metrics, on either engine: each operation, the runway the
 * partitions give now (re-planned only when there are metrics to set: the plan costs queries),
 * and the run's result. A failed re-plan leaves the runway as the last run set it.
 */
export async function recordMaintenanceRun(
  metrics: MaintenanceMetrics | null,
  run: { now: Date; operations: readonly { kind: string; result: string }[]; failed: boolean },
  replan: () => Promise<{ runwayHours: number; settings: { interval: PartitionInterval } } | null>,
): Promise<void> {
  if (!metrics) return;
  for (const op of run.operations) metrics.operations.inc({ kind: op.kind, result: op.result });
  const after = await replan().catch(() => null);
  if (after) {
    metrics.runwayHours.set(after.runwayHours);
    metrics.runwayEnd.set(run.now.getTime() / 1000 + after.runwayHours * 3600);
    metrics.intervalSeconds.set(partitionIntervalSeconds(after.settings.interval));
  }
  if (!run.failed) metrics.lastSuccess.set(run.now.getTime() / 1000);
  metrics.runs.inc({ result: run.failed ? "failed" : "success" });
}
