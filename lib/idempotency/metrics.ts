import type { Counter, Gauge, Histogram, Metric, Registry } from "prom-client";
import { partitionMissingCounter } from "./maintenance-metrics";
import { noMetrics, promClient, requirePromClient } from "./prom";
import { CLAIM_DURATION_BUCKETS } from "./states";

/**
 * Upper bounds (seconds) of the redelivery-gap histogram: 1 s … 30 d. The same list as the SQL
 * function onceboard_gap_bucket_bounds(), so Prometheus and the Postgres rollups agree (a test
 * checks they match).
 */
export const GAP_BUCKET_BOUNDS = [
  1, 5, 15, 60, 300, 900, 3600, 14400, 43200, 86400, 172800, 259200, 604800, 1209600, 2592000,
] as const;

/** The metric naming a worker (its worker_name label) on its /metrics. */
export const WORKER_INFO_METRIC = "idem_worker_info";

declare global {
  var __onceboardIdemRegistry: Registry | undefined;
}

/**
 * The registry used when createEffects is given none. Anchored on globalThis: Next.js (and some
 * test runners) load separate copies of a module, which would otherwise each register metrics.
 */
export function defaultRegistry(): Registry {
  globalThis.__onceboardIdemRegistry ??= new (requirePromClient("the default metrics registry").Registry)();
  return globalThis.__onceboardIdemRegistry;
}

/** A registry of its own (tests, the kit), or undefined when prom-client is not installed. */
export function createRegistry(): Registry | undefined {
  const prom = promClient();
  return prom ? new prom.Registry() : undefined;
}

/** The registry metrics go to: the one given, else the default one, else none (no prom-client). */
export function registryFor(given: Registry | undefined): Registry | undefined {
  return given ?? (promClient() ? defaultRegistry() : undefined);
}

/** No tenant or key labels: per-tenant views come from Postgres, not Prometheus. */
export interface EffectsMetrics {
  claims: Counter<"job_type" | "result">;
  duplicateSuppressions: Counter<"job_type">;
  keyReuse: Counter<"job_type">;
  abandoned: Counter<"job_type">;
  takeovers: Counter<"job_type">;
  leaseLost: Counter<"job_type">;
  stepFailures: Counter<"job_type">;
  uncaughtViolations: Counter<"job_type" | "constraint">;
  deliveries: Counter<"job_type" | "redelivered">;
  messageIdKeys: Counter<"job_type">;
  rollupFlushFailures: Counter<string>;
  /** Delivery timeline rows given up on (buffer full while the database was unreachable, or no partition). */
  timelineDropped: Counter<"reason">;
  /** Duplicates whose bookkeeping found no effect row at the flush: not counted on any row. */
  duplicateCountsDropped: Counter<string>;
  /** Uncaught violations whose row (uncaught_violation_keys) could not be written. */
  violationRecordFailures: Counter<string>;
  redeliveryGap: Histogram<"job_type">;
  /** Claims whose delivery was published longer ago than the retention. */
  claimsBeyondRetention: Counter<"job_type">;
  claimDuration: Histogram<"job_type">;
  /** Claims refused with PartitionMissingError (an alert of its own). */
  partitionMissing: Counter<"job_type">;
  /** 1, labelled with the worker's name across restarts: what its starts are recorded under (worker_starts). */
  workerInfo: Gauge<"worker_name">;
}

function reuse<M extends Metric>(registry: Registry, name: string, make: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? make();
}

/**
 * Registers the idem_* metrics on `registry`, or returns those already registered there; with no
 * registry (prom-client not installed), metrics that count nothing.
 */
export function createMetrics(registry: Registry | undefined): EffectsMetrics {
  if (!registry) return noMetrics<EffectsMetrics>();
  const { Counter, Histogram } = requirePromClient("metrics");
  const counter = <L extends string>(name: string, help: string, labelNames: L[]) =>
    reuse(registry, name, () => new Counter<L>({ name, help, labelNames, registers: [registry] }));
  return {
    claims: counter("idem_claims_total", "Effect claims by final result of the claim.", ["job_type", "result"]),
    duplicateSuppressions: counter(
      "idem_duplicate_suppressions_total",
      "Deliveries whose effect had already completed: the step was not run, the stored outcome returned.",
      ["job_type"],
    ),
    keyReuse: counter("idem_key_reuse_total", "Claims refused because the key was first used with a different payload.", [
      "job_type",
    ]),
    abandoned: counter(
      "idem_abandoned_total",
      "At-most-once steps whose owner died, or whose step threw, between claim and completion; marked abandoned, not run again.",
      ["job_type"],
    ),
    takeovers: counter("idem_takeovers_total", "Claims taken over after the previous owner's lease expired.", ["job_type"]),
    leaseLost: counter("idem_lease_lost_total", "Completions refused because another delivery had taken the claim over.", [
      "job_type",
    ]),
    stepFailures: counter("idem_step_failures_total", "Steps whose handler threw.", ["job_type"]),
    uncaughtViolations: counter(
      "idem_unique_violations_uncaught_total",
      "Unique violations (23505) raised by handlers' own writes, not by claims: a missing guard.",
      ["job_type", "constraint"],
    ),
    deliveries: counter("idem_deliveries_total", "Deliveries handed to effects.job / effects.once.", ["job_type", "redelivered"]),
    messageIdKeys: counter(
      "idem_message_id_keys_total",
      "Effects keyed on the broker's message id (keys must name the business fact).",
      ["job_type"],
    ),
    rollupFlushFailures: counter(
      "idem_rollup_flush_failures_total",
      "Failed flushes of per-minute rollups (kept and retried).",
      [],
    ),
    timelineDropped: counter(
      "idem_timeline_dropped_total",
      "Delivery timeline rows this worker gave up on: its buffer was full while flushes failed (buffer_full), or no partition held them (no_partition).",
      ["reason"],
    ),
    duplicateCountsDropped: counter(
      "idem_duplicate_counts_dropped_total",
      "Effects whose batched duplicate counts found no row at the flush (pruned or deleted after the duplicate was seen): those counts are on no row.",
      [],
    ),
    violationRecordFailures: counter(
      "idem_violation_record_failures_total",
      "Uncaught unique violations whose key could not be recorded (counted and logged; the handler's error is still rethrown).",
      [],
    ),
    claimsBeyondRetention: counter(
      "idem_claims_beyond_retention_total",
      "Claims of deliveries published longer ago than the effect retention: a duplicate among them is unrecognisable once its record is pruned.",
      ["job_type"],
    ),
    redeliveryGap: reuse(
      registry,
      "idem_redelivery_gap_seconds",
      () =>
        new Histogram({
          name: "idem_redelivery_gap_seconds",
          help: "Seconds from an effect's first claim to a suppressed duplicate delivery.",
          labelNames: ["job_type"],
          buckets: [...GAP_BUCKET_BOUNDS],
          registers: [registry],
        }),
    ),
    claimDuration: reuse(
      registry,
      "idem_claim_duration_seconds",
      () =>
        new Histogram({
          name: "idem_claim_duration_seconds",
          help: "Seconds to claim an effect, including any bounded wait for an in-flight duplicate.",
          labelNames: ["job_type"],
          buckets: [...CLAIM_DURATION_BUCKETS],
          registers: [registry],
        }),
    ),
    partitionMissing: partitionMissingCounter(registry),
    workerInfo: reuse(
      registry,
      WORKER_INFO_METRIC,
      () =>
        new (requirePromClient("metrics").Gauge)({
          name: WORKER_INFO_METRIC,
          help: "1, labelled with this worker's name across restarts (the workerName option): the console counts its restarts from the starts recorded under that name.",
          labelNames: ["worker_name"],
          registers: [registry],
        }),
    ),
  };
}
