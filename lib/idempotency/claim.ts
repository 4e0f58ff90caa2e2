import { randomUUID } from "node:crypto";
import { type ClaimResultKind, type ClaimRow, runClaim } from "./claim-sql";
import { type ClaimRef, runAbandon, runComplete, runExtendLease, runFail } from "./complete-sql";
import type { EffectsCore } from "./core";
import { bookkeep, type Sql } from "./db";
import { mapDbError } from "./db-errors";
import type { Duration } from "./duration";
import {
  ClaimSettledError,
  EffectInFlightError,
  EffectKeyReuseError,
  LeaseLostError,
  OutcomeNotStorableError,
  OutcomeTooLargeError,
  PartitionMissingError,
  RetentionWindowError,
} from "./errors";
import { providerKeyFor } from "./keys";
import { leaseMsOf } from "./options";
import { type EncodedOutcome, encodeOutcome } from "./outcome";
import { withRetry } from "./retryable";
import type { StepSpec } from "./spec";
import { timelineAnswerOf } from "./timeline";
import { claimWithWait } from "./wait";

/** What a claim needs of a step's spec. */
export type ClaimSpec = Pick<
  StepSpec,
  | "tenant"
  | "key"
  | "jobType"
  | "policy"
  | "messageId"
  | "deliveryAttempt"
  | "redelivered"
  | "publishedAt"
  | "requestHash"
  | "leaseMs"
  | "waitMs"
>;

/** Runs a statement of ours: retried in one place when we own the transaction, never inside the caller's. */
export async function runStatement<T>(sql: Sql, fn: () => Promise<T>): Promise<T> {
  try {
    return sql.inTransaction ? await fn() : await withRetry(fn);
  } catch (error) {
    throw mapDbError(error);
  }
}

/**
 * What the library's own modules (step.ts, claim-batch.ts) do with a claim beyond its public face:
 * store an already encoded outcome, turn a marker into its typed error, and the batched
 * completion's checks. Set by Claim's static block; not exported from any entry point.
 */
export interface ClaimInternals {
  completeJson(claim: Claim, outcomeJson: string, error?: string | null): Promise<void>;
  markerError(claim: Claim, encoded: Extract<EncodedOutcome, { ok: false }>, duplicate: boolean): Error;
  /** Throws ClaimSettledError when the claim was already completed or failed. */
  assertOpen(claim: Claim): void;
  /** A batched completion stored the claim's outcome: it is never written again. */
  markCompleted(claim: Claim): void;
  /** Counts and returns the LeaseLostError of a completion that found the claim taken over. */
  leaseLost(claim: Claim): LeaseLostError;
  /** The statements' handle the claim was made on (its owned run, when it has one). */
  sqlOf(claim: Claim): Sql;
}

// Assigned once, when the class below is defined.
export let claimInternals: ClaimInternals;

/** This delivery owns the effect: run the step, then complete() or fail(). */
export class Claim {
  readonly tenant: string;
  readonly key: string;
  readonly jobType: string;
  /** 1 on the first claim; +1 on each takeover or retry. */
  readonly attempt: number;
  /** claimed (first), takeover (previous owner's lease expired) or retry (previous attempt threw). */
  readonly how: Extract<ClaimResultKind, "claimed" | "takeover" | "retry">;
  readonly createdAt: Date;
  readonly owner: string;
  leaseUntil: Date;
  private providerKeyCache: string | undefined;
  /** Set once complete(), fail() or abandon() succeeded: a settled claim is never written again. */
  private settled: "completed" | "failed" | "abandoned" | null = null;

  constructor(
    private readonly core: EffectsCore,
    private readonly sql: Sql,
    readonly spec: ClaimSpec,
    row: ClaimRow,
  ) {
    this.tenant = spec.tenant;
    this.key = spec.key;
    this.jobType = spec.jobType;
    this.attempt = row.attempt;
    this.how = row.result as Claim["how"];
    this.createdAt = row.createdAt ?? new Date();
    this.owner = row.owner ?? "";
    this.leaseUntil = row.leaseUntil ?? new Date();
  }

  /** Send this to a third party as its idempotency key: the same on every attempt. Hashed on first use. */
  get providerKey(): string {
    this.providerKeyCache ??= providerKeyFor(this.tenant, this.key);
    return this.providerKeyCache;
  }

  get ref(): ClaimRef {
    return { tenant: this.tenant, key: this.key, createdAt: this.createdAt, owner: this.owner, attempt: this.attempt };
  }

  /** Pushes the lease end to now + `by` (default: the configured lease). Throws LeaseLostError if taken over. */
  async extendLease(by?: Duration): Promise<Date> {
    const ms = by === undefined ? this.spec.leaseMs : leaseMsOf(by);
    const until = await runStatement(this.sql, () => runExtendLease(this.sql, this.ref, ms));
    if (!until) {
      this.core.metrics.leaseLost.inc({ job_type: this.jobType });
      throw new LeaseLostError(this.key, this.attempt);
    }
    this.leaseUntil = until;
    return until;
  }

  /**
   * Low-level (effects.claim): stores `outcome` as JSON and ends the claim. An outcome that cannot
   * be kept (over maxOutcomeBytes, or not JSON: see outcome.ts) is recorded as completed with its
   * marker, so the effect is never run again, and OutcomeTooLargeError / OutcomeNotStorableError is
   * thrown. LeaseLostError when another delivery took the claim over; ClaimSettledError when this
   * claim was already completed or failed (the stored outcome is never replaced).
   */
  async complete(outcome: unknown): Promise<void> {
    await this.#store(encodeOutcome(outcome, this.core.opts.maxOutcomeBytes));
  }

  /** Stores an encoded outcome; for a marker, stores it and throws the matching typed error. */
  async #store(encoded: EncodedOutcome): Promise<void> {
    if (encoded.ok) {
      await this.#completeJson(encoded.json);
      return;
    }
    await this.#completeJson("null", encoded.marker);
    throw this.#markerError(encoded, false);
  }

  #markerError(encoded: Extract<EncodedOutcome, { ok: false }>, duplicate: boolean): Error {
    if (encoded.marker.startsWith("outcome_too_large")) {
      return new OutcomeTooLargeError(this.key, Number.parseInt(encoded.reason, 10), this.core.opts.maxOutcomeBytes);
    }
    return new OutcomeNotStorableError(this.key, encoded.reason, duplicate);
  }

  /** Stores the outcome (JSON text). Throws LeaseLostError when another delivery took the claim over. */
  async #completeJson(outcomeJson: string, error: string | null = null): Promise<void> {
    if (this.settled) throw new ClaimSettledError(this.key, this.settled);
    const coalescer = this.#coalescer();
    const ok = coalescer
      ? await coalescer.complete(this.ref, outcomeJson, error).catch((e: unknown) => Promise.reject(mapDbError(e)))
      : await runStatement(this.sql, () => runComplete(this.sql, this.ref, outcomeJson, error, this.core.store.citus));
    if (!ok) {
      this.core.metrics.leaseLost.inc({ job_type: this.jobType });
      throw new LeaseLostError(this.key, this.attempt);
    }
    this.settled = "completed";
  }

  /** The instance's coalescer, for a claim outside any transaction (a transaction's statements are its own). */
  #coalescer() {
    return this.sql.inTransaction ? null : this.core.coalescer;
  }

  /** Throws ClaimSettledError when this claim was already completed or failed. */
  #assertOpen(): void {
    if (this.settled) throw new ClaimSettledError(this.key, this.settled);
  }

  /** A batched completion (effects.completeMany) stored this claim's outcome: it is never written again. */
  #markCompleted(): void {
    this.settled = "completed";
  }

  /** Counts and returns the LeaseLostError of a completion that found the claim taken over. */
  #leaseLost(): LeaseLostError {
    this.core.metrics.leaseLost.inc({ job_type: this.jobType });
    return new LeaseLostError(this.key, this.attempt);
  }

  static {
    claimInternals = {
      completeJson: (claim, outcomeJson, error) => claim.#completeJson(outcomeJson, error),
      markerError: (claim, encoded, duplicate) => claim.#markerError(encoded, duplicate),
      assertOpen: (claim) => claim.#assertOpen(),
      markCompleted: (claim) => claim.#markCompleted(),
      leaseLost: (claim) => claim.#leaseLost(),
      sqlOf: (claim) => claim.sql,
    };
  }

  /** Releases the claim as failed so the next delivery retries it at once. */
  async fail(error: unknown): Promise<void> {
    if (this.settled) throw new ClaimSettledError(this.key, this.settled);
    const message = errorText(error);
    const coalescer = this.#coalescer();
    if (coalescer) await coalescer.fail(this.ref, message).catch((e: unknown) => Promise.reject(mapDbError(e)));
    else await runStatement(this.sql, () => runFail(this.sql, this.ref, message, this.core.store.citus));
    this.settled = "failed";
  }

  /**
   * Ends the claim as abandoned: never run again, no outcome (what an at-most-once step gets when
   * it cannot tell whether its effect happened). Not coalesced: it is the rare path.
   */
  async abandon(error: unknown): Promise<void> {
    if (this.settled) throw new ClaimSettledError(this.key, this.settled);
    const message = `abandoned: attempt ${this.attempt} threw (${errorText(error)}); at most once, so not run again`;
    await runStatement(this.sql, () => runAbandon(this.sql, this.ref, message, this.core.store.citus));
    this.settled = "abandoned";
    this.core.metrics.abandoned.inc({ job_type: this.jobType });
    this.core.rollups?.add(this.jobType, { abandoned: 1 });
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

export type Acquired =
  | { kind: "owned"; row: ClaimRow; claim: Claim }
  /** ownCommit: a rerun of an owned transaction found its own earlier run's committed effect. */
  | { kind: "duplicate"; row: ClaimRow; ownCommit?: true }
  | { kind: "abandoned"; row: ClaimRow };

/**
 * One claim, with the bounded wait for an in-flight duplicate. Counts the final result; throws
 * the typed errors for in-flight (after the wait), key reuse and an expired retention.
 */
export async function acquire(core: EffectsCore, sql: Sql, spec: ClaimSpec): Promise<Acquired> {
  const { opts } = core;
  const owner = sql.ownedRun?.owner ?? `${opts.workerId}:${randomUUID()}`;
  const hash = spec.requestHash;
  const requireExisting = spec.publishedAt !== null && Date.now() - spec.publishedAt.getTime() > opts.retentionMs;
  const started = performance.now();

  const claimOnce = (lockTimeoutMs: number) => {
    const params = {
      tenant: spec.tenant,
      key: spec.key,
      jobType: spec.jobType,
      policy: spec.policy,
      owner,
      messageId: spec.messageId,
      requestHash: hash,
      leaseMs: spec.leaseMs,
      lockTimeoutMs,
      requireExisting,
      demo: opts.demo,
      likelyDuplicate: spec.redelivered,
    };
    const citus = core.store.citus;
    if (sql.inTransaction) return runClaim(sql, params, citus);
    return core.coalescer ? core.coalescer.claim(params) : withRetry(() => runClaim(sql, params, citus));
  };
  // The timeline tells a duplicate that waited for an in-flight copy from one that did not.
  let waited = false;
  const claimNoting = async (lockTimeoutMs: number) => {
    const answer = await claimOnce(lockTimeoutMs);
    if (answer.result === "in_flight") waited = true;
    return answer;
  };
  const row = await claimWithWait(claimNoting, spec.waitMs, { abortsOnLockTimeout: sql.inTransaction }).catch(
    (error: unknown) => {
      const mapped = mapDbError(error);
      if (mapped instanceof PartitionMissingError) core.metrics.partitionMissing.inc({ job_type: spec.jobType });
      throw mapped;
    },
  );

  return settleClaim(core, sql, spec, row, (performance.now() - started) / 1000, { waited });
}

/**
 * What one claim's row means: counts it (metrics, rollups, the duplicate ledger) and returns the
 * owned claim, the duplicate or the abandoned effect; throws the typed errors for in flight, key
 * reuse and an expired retention. Shared by single and batched claims. `waited`: an earlier poll of
 * this delivery found the effect in flight. `recorded`: the caller put it on the timeline already
 * (claimMany records its statement's deliveries together: DeliveryTimeline.recordBatch).
 */
export function settleClaim(
  core: EffectsCore,
  sql: Sql,
  spec: ClaimSpec,
  row: ClaimRow,
  seconds: number,
  { waited = false, recorded = false }: { waited?: boolean; recorded?: boolean } = {},
): Acquired {
  // A rerun of an owned transaction whose COMMIT went through unanswered finds its own completed
  // effect: the delivery ran once, here, and is booked as the claim it was, not as a duplicate.
  const ownCommit = row.result === "duplicate" && sql.ownedRun !== undefined && row.owner === sql.ownedRun.owner;
  const booked: ClaimRow = ownCommit ? { ...row, result: "claimed" } : row;
  bookkeep(sql, () => bookClaim(core, spec, booked, seconds, waited, recorded));

  switch (row.result) {
    case "claimed":
    case "retry":
    case "takeover":
      return { kind: "owned", row, claim: new Claim(core, sql, spec, row) };
    case "duplicate":
      return ownCommit ? { kind: "duplicate", row, ownCommit } : { kind: "duplicate", row };
    case "abandoned":
      return { kind: "abandoned", row };
    case "in_flight": {
      const leaseLeft = row.leaseUntil ? row.leaseUntil.getTime() - row.dbNow.getTime() : spec.leaseMs;
      const retryAfterMs = Math.min(Math.max(leaseLeft, 1000), Math.max(spec.leaseMs, 1000));
      throw new EffectInFlightError(spec.tenant, spec.key, row.leaseUntil, retryAfterMs);
    }
    case "key_reuse":
      throw new EffectKeyReuseError(spec.tenant, spec.key, row.firstMessageId);
    case "retention_expired":
      throw new RetentionWindowError(spec.key, spec.publishedAt ?? new Date(0), core.opts.retentionMs);
    default:
      throw new Error(`unexpected claim result ${String(row.result)}`);
  }
}

/**
 * What one claim's answer adds to the metrics, the rollups, the timeline (unless `recorded` there
 * already) and the duplicate counts.
 */
function bookClaim(core: EffectsCore, spec: ClaimSpec, row: ClaimRow, seconds: number, waited: boolean, recorded: boolean): void {
  const { metrics, rollups, opts } = core;
  const labels = { job_type: spec.jobType };
  if (!recorded) {
    core.timeline?.record({
      tenant: spec.tenant,
      key: spec.key,
      jobType: spec.jobType,
      messageId: spec.messageId,
      deliveryAttempt: spec.deliveryAttempt,
      answer: timelineAnswerOf(row.result, waited),
      row,
      claimSeconds: seconds,
    });
  }
  metrics.claimDuration.observe(labels, seconds);
  metrics.claims.inc({ job_type: spec.jobType, result: row.result });
  rollups?.addClaim(spec.jobType, seconds);
  // A delivery published longer ago than the retention. Counted whatever the result:
  // where its record was already pruned, a duplicate among these cannot have been recognised.
  const beyondRetention = spec.publishedAt !== null && Date.now() - spec.publishedAt.getTime() > opts.retentionMs;
  if (beyondRetention) {
    metrics.claimsBeyondRetention.inc(labels);
    rollups?.add(spec.jobType, { claimsBeyondRetention: 1 });
  }

  switch (row.result) {
    case "takeover":
      metrics.takeovers.inc(labels);
      rollups?.add(spec.jobType, { takeovers: 1 });
      break;
    case "duplicate":
      metrics.duplicateSuppressions.inc(labels);
      if (row.createdAt) core.duplicates.record(spec.tenant, spec.key, row.createdAt, row.gapSeconds, spec.messageId);
      if (row.gapSeconds !== null) {
        metrics.redeliveryGap.observe(labels, row.gapSeconds);
        rollups?.observeGap(spec.jobType, row.gapSeconds);
      }
      rollups?.add(spec.jobType, { suppressed: 1 });
      rollups?.addTenantSuppression(spec.tenant, spec.jobType);
      break;
    case "abandoned":
      metrics.abandoned.inc(labels);
      rollups?.add(spec.jobType, { abandoned: 1 });
      break;
    case "in_flight":
      rollups?.add(spec.jobType, { inFlight: 1 });
      break;
    case "key_reuse":
      metrics.keyReuse.inc(labels);
      rollups?.add(spec.jobType, { keyReuse: 1 });
      break;
  }
}
