import type { BatchClaimParams, ClaimParams, ClaimRow } from "./claim-sql";
import type { ClaimRef } from "./complete-sql";
import type { EffectsDb, Sql } from "./db";
import type { TimelineAnswer } from "./states";

/** An outcome to store with its claim: JSON text, and the marker of an outcome that could not be kept. */
export interface Completion {
  ref: ClaimRef;
  outcomeJson: string;
  error: string | null;
  /**
   * The claim was written completed with an empty outcome, in this same transaction
   * (ClaimParams.completed): this outcome replaces that empty one.
   */
  replacesEmpty?: boolean;
}

/** A claim released as failed or abandoned, with why. */
export interface Release {
  ref: ClaimRef;
  message: string;
}

/** One effect's duplicates seen since the last flush: the counts add, so a retried flush is exact. */
export interface DuplicateCounts {
  tenant_id: string;
  key: string;
  /** The effect's created_at (ISO): the row's partition. */
  created_at: string;
  n: number;
  /** Epoch ms of the latest duplicate. */
  last_at: number;
  max_gap: number;
  last_message_id: string | null;
}

/**
 * What one call of applyDuplicates did with a part of the entries: applied (`updated`: the effect
 * rows it found and updated, one per entry unless a row is gone), or failed with `error`.
 */
export type DuplicatesApplied =
  | { entries: DuplicateCounts[]; ok: true; updated: number }
  | { entries: DuplicateCounts[]; ok: false; error: unknown };

/** The per-minute counters of one job type, as stored in worker_stats_minute. */
export interface StatCounts {
  claims: number;
  suppressed: number;
  inFlight: number;
  takeovers: number;
  abandoned: number;
  failed: number;
  keyReuse: number;
  uncaughtViolations: number;
  deliveries: number;
  redeliveries: number;
  messageIdKeys: number;
  claimSecondsSum: number;
  gapSecondsSum: number;
  /** Claims of deliveries published longer ago than the retention. */
  claimsBeyondRetention: number;
}

/**
 * A flush's unit of deliveries, as PostgreSQL's delivery_timeline stores it (one row: the store's
 * insertTimeline reads it as JSON; MySQL's writes a row per delivery): parallel arrays, element i one
 * delivery. Every column but keys holds one element when all the chunk's deliveries share its
 * value, and effect_created_at none when each delivery met the effect it created (effect_created_at
 * = delivered_at): readers take element 1 of a one-element column, else element i (migration 0015).
 */
export interface TimelineChunk {
  chunk_id: string;
  first_at: string;
  last_at: string;
  later_keys: string[] | null;
  tenants: string[];
  keys: string[];
  job_types: string[];
  delivered_at: string[];
  answers: TimelineAnswer[];
  message_ids: (string | null)[];
  delivery_attempts: (number | null)[];
  effect_attempts: number[];
  claim_ms: number[];
  effect_created_at: (string | null)[];
}

/** One minute's counters of one job type (rollups.ts), with its gap and claim-duration histograms. */
export interface StatsRollup {
  /** Epoch ms of the minute's start. */
  minute: number;
  jobType: string;
  counts: StatCounts;
  /** One count per bucket of GAP_BUCKET_BOUNDS, then +Inf. */
  gapBuckets: readonly number[];
  /** One count per bucket of CLAIM_DURATION_BUCKETS, then +Inf. */
  claimBuckets: readonly number[];
}

/** One minute's uncaught violations of one job type and constraint (rollups.ts). */
export interface ViolationRollup {
  minute: number;
  jobType: string;
  constraint: string;
  count: number;
  last: { tenant: string; key: string; messageId: string | null } | null;
}

/** One hour's suppressed duplicates of one tenant and job type. */
export interface TenantSuppressionRollup {
  hour: number;
  tenant: string;
  jobType: string;
  count: number;
}

/** One hour's uncaught violations of one tenant, job type and constraint, with the last key seen. */
export interface TenantViolationRollup extends TenantSuppressionRollup {
  constraint: string;
  lastKey: string;
  /** Epoch ms. */
  lastSeen: number;
}

/** One uncaught unique violation's row (violations.ts). */
export interface ViolationRecord {
  /** A UUID: a retried insert whose reply was lost writes nothing twice. */
  id: string;
  tenant: string;
  jobType: string;
  constraint: string;
  key: string;
  messageId: string | null;
  message: string | null;
  workerId: string;
  marked: boolean;
}

/** A worker's registration and heartbeat (worker-registry.ts). */
export interface WorkerBeat {
  workerId: string;
  maxRetryWindowSeconds: number;
  host: string;
  pid: number;
  ttlSeconds: number;
}

/** One start of a worker process, recorded when it registers (worker_starts). */
export interface WorkerStart {
  workerName: string;
  processStartedAt: Date;
  host: string;
  pid: number;
  workerId: string;
}

/**
 * The statements the one lifecycle (once, job steps, batches, the coalescer) needs of a store, and
 * nothing else: each decides atomically in the database, in one round trip, never read-then-write
 * (Powertools' BasePersistenceLayer is the model). The lifecycle owns retries, waits, coalescing,
 * metrics and the typed errors; a store only runs its statements on the handle it is given (the
 * library's autocommit pool, or a transaction) and throws the driver's errors as they come. A second
 * engine is a second implementation of this interface (stores/postgres.ts is the first, Citus its
 * mode; stores/mysql.ts the second, for MySQL 8 and MariaDB), not a second lifecycle.
 */
export interface Store {
  /** The engine the statements are written for. */
  readonly engine: "postgres" | "mysql";
  /** Learns what the store needs before the first claim (PostgreSQL: one server or Citus); once, again after a failure. */
  prepare(db: EffectsDb, schema: string): Promise<void>;
  /** One claim, decided as the claim contract says (claim-sql.ts: ClaimResultKind). */
  claim(sql: Sql, params: ClaimParams): Promise<ClaimRow>;
  /** Many claims of one job type and policy, in input order, each answered as claim() would answer it alone. */
  claimBatch(sql: Sql, params: BatchClaimParams): Promise<ClaimRow[]>;
  /** Stores the outcome and ends the claim; false when the claim is no longer ours (taken over). */
  complete(sql: Sql, completion: Completion): Promise<boolean>;
  /** complete() for many claims in one commit: which were still ours, by index. */
  completeBatch(sql: Sql, completions: readonly Completion[]): Promise<boolean[]>;
  /** Releases the claim as failed, so the next delivery retries at once; false when no longer ours. */
  fail(sql: Sql, release: Release): Promise<boolean>;
  /** fail() for many claims in one commit: which were still ours, by index. */
  failBatch(sql: Sql, releases: readonly Release[]): Promise<boolean[]>;
  /** Ends the claim as abandoned (at most once: never run again); false when no longer ours. */
  abandon(sql: Sql, release: Release): Promise<boolean>;
  /** Pushes the lease end to now + `leaseMs`: the new end, or null when the claim is no longer ours. */
  extendLease(sql: Sql, ref: ClaimRef, leaseMs: number): Promise<Date | null>;
  /** Adds the duplicate counts to their rows; each part answered applied or failed (kept for the next flush). */
  applyDuplicates(sql: Sql, entries: readonly DuplicateCounts[]): Promise<DuplicatesApplied[]>;

  // The bookkeeping the lifecycle flushes in the background (rollups.ts, timeline.ts,
  // violations.ts, worker-registry.ts): each adds to its rows, so a retried write is exact.
  /** Adds a minute's counters (and its claim-duration histogram, when it counted claims) of one job type. */
  addStats(sql: Sql, row: StatsRollup, marked: boolean): Promise<void>;
  addViolationCounts(sql: Sql, row: ViolationRollup, marked: boolean): Promise<void>;
  addTenantSuppressions(sql: Sql, row: TenantSuppressionRollup, marked: boolean): Promise<void>;
  addTenantViolations(sql: Sql, row: TenantViolationRollup, marked: boolean): Promise<void>;
  /** Writes delivery-timeline chunks; a write retried with the same chunk ids writes each delivery once. */
  insertTimeline(sql: Sql, chunks: readonly TimelineChunk[], workerId: string, marked: boolean): Promise<void>;
  /** Records one uncaught violation; an insert retried with the same id writes nothing twice. */
  insertViolation(sql: Sql, violation: ViolationRecord): Promise<void>;
  /** The database retention in days (retention_settings), or null when the row is missing. */
  readRetentionDays(sql: Sql): Promise<number | null>;
  /** Registers a worker, or beats its heartbeat. */
  beat(sql: Sql, worker: WorkerBeat): Promise<void>;
  /** Removes a stopped worker's registration. */
  unregister(sql: Sql, workerId: string): Promise<void>;
  /** Records this process's start under the worker's name (once per start), pruning the name's starts older than a month. */
  recordStart(sql: Sql, start: WorkerStart): Promise<void>;
}
