import { randomUUID } from "node:crypto";
import type { ClaimParams, ClaimResultKind, ClaimRow } from "./claim-sql";
import type { ClaimRef } from "./complete-sql";
import type { EffectsCore } from "./core";
import { isPgPool, recordOnce, type Sql } from "./db";
import { mapDbError } from "./db-errors";
import type { Duration } from "./duration";
import {
  ClaimSettledError,
  EffectInFlightError,
  EffectKeyReuseError,
  type EffectsError,
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
import type { Completion, Release } from "./store";
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
async function runStatement<T>(sql: Sql, fn: () => Promise<T>): Promise<T> {
  try {
    return sql.inTransaction ? await fn() : await withRetry(fn);
  } catch (error) {
    throw mapDbError(error);
  }
}

/** This delivery owns the effect: run the step, then complete() or fail(). */
export interface Claim {
  readonly tenant: string;
  readonly key: string;
  readonly jobType: string;
  /** 1 on the first claim; +1 on each takeover or retry. */
  readonly attempt: number;
  /** claimed (first), takeover (previous owner's lease expired) or retry (previous attempt threw). */
  readonly how: Extract<ClaimResultKind, "claimed" | "takeover" | "retry">;
  readonly createdAt: Date;
  readonly owner: string;
  /** The lease's end; extendLease() moves it. */
  readonly leaseUntil: Date;
  /** Send this to a third party as its idempotency key: the same on every attempt. */
  readonly providerKey: string;
  /** Pushes the lease end to now + `by` (default: the configured lease). Throws LeaseLostError if taken over. */
  extendLease(by?: Duration): Promise<Date>;
  /**
   * Low-level (effects.claim): stores `outcome` as JSON and ends the claim. An outcome that cannot
   * be kept (over maxOutcomeBytes, or not JSON: see outcome.ts) is recorded as completed with its
   * marker, so the effect is never run again, and OutcomeTooLargeError / OutcomeNotStorableError is
   * thrown. LeaseLostError when another delivery took the claim over; ClaimSettledError when this
   * claim was already completed or failed (the stored outcome is never replaced).
   */
  complete(outcome: unknown): Promise<void>;
  /** Releases the claim as failed so the next delivery retries it at once. */
  fail(error: unknown): Promise<void>;
  /**
   * Ends the claim as abandoned: never run again, no outcome (what an at-most-once step gets when
   * it cannot tell whether its effect happened). Not coalesced: it is the rare path.
   */
  abandon(error: unknown): Promise<void>;
}

/**
 * Where the lifecycle's statements go: inside a transaction (the caller's, or one the library
 * opened) as they are, since the transaction owns them; outside, through the coalescer when it is
 * on, else alone, retried on a transient error. Raw database errors, for the caller to map.
 */
function sendClaim(core: EffectsCore, sql: Sql, params: ClaimParams): Promise<ClaimRow> {
  if (sql.inTransaction) return core.store.claim(sql, params);
  return core.coalescer ? core.coalescer.claim(params) : withRetry(() => core.store.claim(sql, params));
}

/** A completion, sent as sendClaim sends a claim; false when the claim is no longer ours. */
function sendCompletion(core: EffectsCore, sql: Sql, completion: Completion): Promise<boolean> {
  if (sql.inTransaction) return core.store.complete(sql, completion);
  return core.coalescer ? core.coalescer.complete(completion) : withRetry(() => core.store.complete(sql, completion));
}

/** A failure, sent as sendClaim sends a claim; false when the claim is no longer ours. */
function sendFailure(core: EffectsCore, sql: Sql, release: Release): Promise<boolean> {
  if (sql.inTransaction) return core.store.fail(sql, release);
  return core.coalescer ? core.coalescer.fail(release) : withRetry(() => core.store.fail(sql, release));
}

/**
 * The library's claim. Its members beyond Claim (ref, sql, storeEncoded, markCompleted, leaseLost)
 * are the lifecycle's (step.ts, claim-batch.ts): the entry points export only the Claim interface.
 */
export class OwnedClaim implements Claim {
  readonly tenant: string;
  readonly key: string;
  readonly jobType: string;
  readonly attempt: number;
  readonly how: Claim["how"];
  readonly createdAt: Date;
  readonly owner: string;
  leaseUntil: Date;
  private providerKeyCache: string | undefined;
  /** Set once complete(), fail() or abandon() succeeded: a settled claim is never written again. */
  private settled: "completed" | "failed" | "abandoned" | null = null;
  /**
   * The claim's own transaction wrote its row completed, with an empty outcome (ClaimParams.completed):
   * an empty outcome needs no statement, another replaces the empty one.
   */
  private readonly writtenCompleted: boolean;

  constructor(
    private readonly core: EffectsCore,
    /** The statements' handle the claim was made on (its owned run, when it has one). */
    readonly sql: Sql,
    private readonly spec: ClaimSpec,
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
    this.writtenCompleted = row.result === "claimed" && row.status === "completed";
  }

  get providerKey(): string {
    this.providerKeyCache ??= providerKeyFor(this.tenant, this.key);
    return this.providerKeyCache;
  }

  get ref(): ClaimRef {
    return { tenant: this.tenant, key: this.key, createdAt: this.createdAt, owner: this.owner, attempt: this.attempt };
  }

  async extendLease(by?: Duration): Promise<Date> {
    const ms = by === undefined ? this.spec.leaseMs : leaseMsOf(by);
    if (this.writtenCompleted && !this.settled) {
      // The row exists only in this claim's uncommitted transaction, whose advisory lock keeps every
      // other claimer waiting, and a crash rolls it back: its lease guards nothing, so none is stored.
      this.leaseUntil = new Date(Date.now() + ms);
      return this.leaseUntil;
    }
    const until = await runStatement(this.sql, () => this.core.store.extendLease(this.sql, this.ref, ms));
    if (!until) throw this.leaseLost();
    this.leaseUntil = until;
    return until;
  }

  async complete(outcome: unknown): Promise<void> {
    const markerError = await this.storeEncoded(encodeOutcome(outcome, this.core.opts.maxOutcomeBytes));
    if (markerError) throw markerError;
  }

  /**
   * Stores an encoded outcome. For a marker (an outcome that cannot be kept), stores the marker and
   * returns its typed error, for the caller to throw when it chooses (after a commit, say).
   * Throws LeaseLostError when another delivery took the claim over.
   */
  async storeEncoded(encoded: EncodedOutcome): Promise<EffectsError | null> {
    this.assertOpen();
    if (this.writtenCompleted && encoded.ok && encoded.json === "null") {
      // Already stored as it is: the claim's row was written completed with an empty outcome.
      this.settled = "completed";
      return null;
    }
    const completion = {
      ref: this.ref,
      outcomeJson: encoded.ok ? encoded.json : "null",
      error: encoded.ok ? null : encoded.marker,
      replacesEmpty: this.writtenCompleted,
    };
    const ok = this.sql.inTransaction
      ? await runStatement(this.sql, () => sendCompletion(this.core, this.sql, completion))
      : await sendCompletion(this.core, this.sql, completion).catch((e: unknown) => Promise.reject(mapDbError(e)));
    if (!ok) throw this.leaseLost();
    this.settled = "completed";
    return encoded.ok ? null : this.markerError(encoded);
  }

  /** The typed error of an outcome stored as a marker. */
  markerError(encoded: Extract<EncodedOutcome, { ok: false }>): EffectsError {
    if (encoded.marker.startsWith("outcome_too_large")) {
      return new OutcomeTooLargeError(this.key, Number.parseInt(encoded.reason, 10), this.core.opts.maxOutcomeBytes);
    }
    return new OutcomeNotStorableError(this.key, encoded.reason, false);
  }

  /** Throws ClaimSettledError when this claim was already completed or failed. */
  assertOpen(): void {
    if (this.settled) throw new ClaimSettledError(this.key, this.settled);
  }

  /** A batched completion (effects.completeMany) stored this claim's outcome: it is never written again. */
  markCompleted(): void {
    this.settled = "completed";
  }

  /** Counts and returns the LeaseLostError of a statement that found the claim taken over. */
  leaseLost(): LeaseLostError {
    this.core.metrics.leaseLost.inc({ job_type: this.jobType });
    return new LeaseLostError(this.key, this.attempt);
  }

  async fail(error: unknown): Promise<void> {
    this.assertOpen();
    const release = { ref: this.ref, message: errorText(error) };
    if (this.sql.inTransaction) await runStatement(this.sql, () => sendFailure(this.core, this.sql, release));
    else await sendFailure(this.core, this.sql, release).catch((e: unknown) => Promise.reject(mapDbError(e)));
    this.settled = "failed";
  }

  async abandon(error: unknown): Promise<void> {
    this.assertOpen();
    const message = `abandoned: attempt ${this.attempt} threw (${errorText(error)}); at most once, so not run again`;
    await runStatement(this.sql, () => this.core.store.abandon(this.sql, { ref: this.ref, message }));
    this.settled = "abandoned";
    this.core.metrics.abandoned.inc({ job_type: this.jobType });
    this.core.rollups?.add(this.jobType, { abandoned: 1 });
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * One claim as the store takes it, alone or in a batch (claim-sql.ts: batchOf). A delivery published
 * longer ago than the retention may only find its effect, never make it (requireExisting).
 */
export function claimParamsOf(
  core: EffectsCore,
  spec: ClaimSpec,
  owner: string,
  lockTimeoutMs: number,
  completed = false,
): ClaimParams {
  return {
    tenant: spec.tenant,
    key: spec.key,
    jobType: spec.jobType,
    policy: spec.policy,
    owner,
    messageId: spec.messageId,
    requestHash: spec.requestHash,
    leaseMs: spec.leaseMs,
    lockTimeoutMs,
    requireExisting: beyondRetention(core, spec),
    marked: core.opts.marked,
    likelyDuplicate: spec.redelivered,
    completed,
  };
}

/** A delivery published longer ago than the retention: its record may have been pruned. */
function beyondRetention(core: EffectsCore, spec: ClaimSpec): boolean {
  return spec.publishedAt !== null && Date.now() - spec.publishedAt.getTime() > core.opts.retentionMs;
}

export type Acquired =
  | { kind: "owned"; row: ClaimRow; claim: OwnedClaim }
  /** ownCommit: a rerun of an owned transaction found its own earlier run's committed effect. */
  | { kind: "duplicate"; row: ClaimRow; ownCommit?: true }
  | { kind: "abandoned"; row: ClaimRow };

/**
 * One claim, with the bounded wait for an in-flight duplicate. Counts the final result; throws
 * the typed errors for in-flight (after the wait), key reuse and an expired retention.
 */
export async function acquire(core: EffectsCore, sql: Sql, spec: ClaimSpec): Promise<Acquired> {
  const { opts } = core;
  const owner = sql.rerunnable?.owner ?? `${opts.workerId}:${randomUUID()}`;
  const started = performance.now();

  // In the library's own transaction on a pg Pool, a new claim is written completed: the transaction
  // is rolled back whenever the step does not succeed, and inNewTransaction refuses to report a
  // COMMIT the server turned into a rollback, so the row never outlives a step that failed.
  const completed = sql.rerunnable !== undefined && isPgPool(opts.db);
  const claimOnce = (lockTimeoutMs: number) => sendClaim(core, sql, claimParamsOf(core, spec, owner, lockTimeoutMs, completed));
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

  return resolveClaimRow(core, sql, spec, row, (performance.now() - started) / 1000, { waited });
}

/**
 * What one claim's row means: counts it (metrics, rollups, the duplicate ledger) and returns the
 * owned claim, the duplicate or the abandoned effect; throws the typed errors for in flight, key
 * reuse and an expired retention. Shared by single and batched claims. `waited`: an earlier poll of
 * this delivery found the effect in flight. `recorded`: the caller put it on the timeline already
 * (claimMany records its statement's deliveries together: DeliveryTimeline.recordBatch).
 */
export function resolveClaimRow(
  core: EffectsCore,
  sql: Sql,
  spec: ClaimSpec,
  row: ClaimRow,
  seconds: number,
  { waited = false, recorded = false }: { waited?: boolean; recorded?: boolean } = {},
): Acquired {
  // A rerun of an owned transaction whose COMMIT went through unanswered finds its own completed
  // effect: the delivery ran once, here, and is booked as the claim it was, not as a duplicate.
  const ownCommit = row.result === "duplicate" && sql.rerunnable !== undefined && row.owner === sql.rerunnable.owner;
  const booked: ClaimRow = ownCommit ? { ...row, result: "claimed" } : row;
  recordOnce(sql, () => bookClaim(core, spec, booked, seconds, waited, recorded));

  switch (row.result) {
    case "claimed":
    case "retry":
    case "takeover":
      return { kind: "owned", row, claim: new OwnedClaim(core, sql, spec, row) };
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
  const { metrics, rollups } = core;
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
  if (beyondRetention(core, spec)) {
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
