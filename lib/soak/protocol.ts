/** What the soak supervisor and its worker processes tell each other (Node IPC). */

/** The pg-boss schema and queue of the soak (its own database, so the names are fixed). */
export const SOAK_BOSS_SCHEMA = "pgboss_soak";
export const SOAK_QUEUE = "order.paid";
export const SOAK_APP_PREFIX = "onceboard-soak";
/**
 * How often a worker writes the library's batched bookkeeping (rollups, duplicate counts,
 * tenant suppressions): the bound on what a SIGKILLed worker loses (docs/soak.md).
 */
export const SOAK_FLUSH_INTERVAL_MS = 2000;

/** The brokers the soak runs on (`--broker`); lib/soak/brokers.ts. */
export const SOAK_BROKERS = ["pg-boss", "bullmq", "rabbitmq", "nats"] as const;
export type SoakBrokerName = (typeof SOAK_BROKERS)[number];

/** Where a worker consumes. */
export interface SoakBrokerEndpoint {
  broker: SoakBrokerName;
  /** The Redis, RabbitMQ or NATS URL (pg-boss: the worker's database URL). */
  url?: string;
  /** The run's queue (BullMQ, RabbitMQ) or stream (NATS). */
  queue?: string;
}

/** Handed to each worker process as ONCEBOARD_SOAK_WORKER (JSON). */
export interface SoakWorkerConfig {
  endpoint: SoakBrokerEndpoint;
  /** Where the worker reaches PostgreSQL: the server, or the fault proxy in front of it. */
  url: string;
  /**
   * --store mariadb: the MariaDB database (through the outage proxy) holding the effects and the
   * shop's tables; unset, both are in `url`'s PostgreSQL.
   */
  shopUrl?: string;
  index: number;
  concurrency: number;
  /** Where the worker writes its last words before it SIGKILLs itself. */
  noteFile: string;
  leaseMs: number;
  waitMs: number;
  inFlightDelayMs: number;
  /** Share of mark-paid runs that write their accounting entry twice (the injected violation). */
  violationRate: number;
  /** SIGKILL the worker (half the time) right after an uncaught violation came back to it. */
  killAfterViolation: boolean;
}

/** Counters a worker reports, as deltas since its last report. */
export interface WorkerCounters {
  /** Handler runs started (a fetched job handed to the worker library). */
  runs: number;
  /** Runs that ended with an ack: the effect ran now or had run before. */
  acked: number;
  /** Acked deliveries in which no step ran (every step a duplicate or abandoned). */
  suppressed: number;
  /** In flight elsewhere: re-sent for later. */
  retriedLater: number;
  /** Runs that failed (the broker retries them). */
  failed: number;
  deadLettered: number;
  /** Steps by result; `resumed` are steps that took over an expired lease or retried a failure. */
  stepsRan: number;
  stepsDuplicate: number;
  stepsAbandoned: number;
  stepsResumed: number;
  /**
   * Step claims the library answered "duplicate": the ground truth of what its batched bookkeeping
   * must record (the rollups' suppressed count, effects.duplicate_count), counted by the handler
   * the moment each step returns.
   */
  duplicateClaims: number;
  /** Runs that failed with LeaseLostError: a stalled worker refused to complete over its successor. */
  leaseLost: number;
  /** Violations the soak injected (the mark-paid accounting entry written twice). */
  injectedViolations: number;
  /** Uncaught unique violations that failed a run, by constraint. */
  violations: Record<string, number>;
  /**
   * The soak's ground truth for the violation rows: the injected violations that came back to the
   * handler, by `<tenant>\u0001<effect key>`. Each must have its row in uncaught_violation_keys.
   */
  violationKeys: Record<string, number>;
}

export function emptyCounters(): WorkerCounters {
  return {
    runs: 0,
    acked: 0,
    suppressed: 0,
    retriedLater: 0,
    failed: 0,
    deadLettered: 0,
    stepsRan: 0,
    stepsDuplicate: 0,
    stepsAbandoned: 0,
    stepsResumed: 0,
    duplicateClaims: 0,
    leaseLost: 0,
    injectedViolations: 0,
    violations: {},
    violationKeys: {},
  };
}

export function addCounters(into: WorkerCounters, d: WorkerCounters): void {
  for (const k of Object.keys(into) as (keyof WorkerCounters)[]) {
    if (k === "violations" || k === "violationKeys") {
      for (const [c, n] of Object.entries(d[k])) into[k][c] = (into[k][c] ?? 0) + n;
    } else {
      into[k] += d[k];
    }
  }
}

/** The file a worker leaves behind when it kills itself: how many runs died with it. */
export interface KillNote {
  pid: number;
  /** Handler runs in flight at the moment of the SIGKILL. */
  inflight: number;
  where: string;
  /** Counters not yet reported. */
  unreported: WorkerCounters;
  /**
   * Duplicate claims this process had counted but the library had not yet written (its batched
   * bookkeeping): `atMost` since the snapshot of the last flush that wrote everything, `atLeast`
   * since the snapshot of a flush still in flight at the kill (equal when none was).
   */
  unflushedDuplicateClaims: { atMost: number; atLeast: number };
  /** This process's idem_duplicate_counts_dropped_total as of its last finished flush: counts that found no row. */
  droppedDuplicateCounts: number;
}

export type WorkerMessage =
  | { type: "ready" }
  | { type: "progress"; counters: WorkerCounters }
  /**
   * unflushedDuplicateClaims: what the library could not write at the graceful stop (0 when its last
   * flush wrote everything); droppedDuplicateCounts: as in KillNote.
   */
  | { type: "stopped"; unflushedDuplicateClaims: number; droppedDuplicateCounts: number };
export type SupervisorMessage = { type: "arm" } | { type: "stop" };
