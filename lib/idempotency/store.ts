import type { BatchClaimParams, ClaimParams, ClaimRow } from "./claim-sql";
import type { ClaimRef } from "./complete-sql";
import type { EffectsDb, Sql } from "./db";

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

/** What one call of applyDuplicates did with a part of the entries: applied, or failed with `error`. */
export type DuplicatesApplied =
  | { entries: DuplicateCounts[]; ok: true }
  | { entries: DuplicateCounts[]; ok: false; error: unknown };

/**
 * The statements the one lifecycle (once, job steps, batches, the coalescer) needs of a store, and
 * nothing else: each decides atomically in the database, in one round trip, never read-then-write
 * (Powertools' BasePersistenceLayer is the model). The lifecycle owns retries, waits, coalescing,
 * metrics and the typed errors; a store only runs its statements on the handle it is given (the
 * library's autocommit pool, or a transaction) and throws the driver's errors as they come. A second
 * engine is a second implementation of this interface (stores/postgres.ts is the first; Citus is its
 * mode), not a second lifecycle.
 */
export interface Store {
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
}
