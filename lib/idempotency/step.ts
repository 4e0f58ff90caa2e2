import { randomUUID } from "node:crypto";
import { type Acquired, acquire, type Claim, type OwnedClaim } from "./claim";
import type { EffectsCore } from "./core";
import {
  assertInTransaction,
  inNewTransaction,
  type RerunnableTransaction,
  recordOnce,
  type Sql,
  sqlFor,
  type TransactionHandle,
  warnIfPoolUnguarded,
} from "./db";
import { mapDbError } from "./db-errors";
import { EffectNotAppliedError, EffectsClosedError, EffectsError, OutcomeNotStorableError, OutcomeTooLargeError } from "./errors";
import { providerKeyFor } from "./keys";
import { type EncodedOutcome, encodeOutcome, parseMarker } from "./outcome";
import { isConnectionError } from "./pg-errors";
import { withRetry } from "./retryable";
import type { StepSpec } from "./spec";
import { traceStep } from "./tracing";
import { recordUncaughtViolation, uniqueViolationConstraint } from "./violations";

export type { StepSpec } from "./spec";

/** What effects.once and each job step resolve to. */
export interface EffectResult<T> {
  /**
   * ran: this delivery ran the step. duplicate: it had completed before; `outcome` is the stored one.
   * abandoned: an at-most-once step whose owner died mid-way; not run again, no outcome.
   */
  result: "ran" | "duplicate" | "abandoned";
  /** True when the step did not run in this delivery (duplicate or abandoned). */
  duplicate: boolean;
  /**
   * The step's return value round-tripped through JSON, the same value on every delivery: null when
   * the step returned null or nothing; undefined only for an abandoned step.
   */
  outcome: T | undefined;
  tenant: string;
  key: string;
  providerKey: string;
  /** The effect's attempt: 1 on the first claim, +1 per takeover or retry. */
  attempt: number;
  /**
   * True when this run took over an expired lease or retried a failed attempt. Read from the
   * attempt, not from the claim's answer: a takeover whose reply was lost is answered "claimed"
   * when its retry finds the row it committed.
   */
  resumed: boolean;
  /** When the effect was first claimed. */
  firstClaimedAt: Date | null;
  /** Seconds from the first claim to this delivery, for duplicates. */
  gapSeconds: number | null;
}

/** The step; its resolved value (T) becomes the outcome. */
export type StepFn<_T> = (claim: Claim, tx: TransactionHandle | undefined) => unknown;

type Level = "info" | "warn" | "error";
/** Logs the one line of a step's execution: its result, with the step's fields. */
export type LogResult = (result: string, extra?: Record<string, unknown>, level?: Level) => void;

function logFields(spec: StepSpec) {
  return {
    tenant: spec.tenant,
    key: spec.key,
    jobType: spec.jobType,
    messageId: spec.messageId,
    attempt: spec.deliveryAttempt,
    policy: spec.policy,
  };
}

/** Counts (and warns about) keys equal to the broker's message id. The key itself is valid (spec.ts). */
function checkStepKey(core: EffectsCore, spec: StepSpec): void {
  const afterStep = spec.key.slice(spec.key.indexOf(":") + 1);
  if (spec.messageId && (spec.key === spec.messageId || afterStep === spec.messageId)) {
    core.metrics.messageIdKeys.inc({ job_type: spec.jobType });
    core.rollups?.add(spec.jobType, { messageIdKeys: 1 });
    core.logger.warn(
      logFields(spec),
      "effect key is the broker's message id: a re-published message gets a new id and would run again; key on the business fact",
    );
  }
}

/** Checks common to every claim (once, job steps, effects.claim), before anything is claimed. */
export async function beforeClaim(core: EffectsCore, spec: StepSpec): Promise<void> {
  if (core.closed) throw new EffectsClosedError("effects.close() was called; no new claims");
  warnIfPoolUnguarded(core.opts.db, (message) => core.logger.warn(message));
  checkStepKey(core, spec);
  try {
    await core.store.prepare(core.opts.db, core.opts.schema);
  } catch (error) {
    throw error instanceof EffectsError ? error : mapDbError(error);
  }
  if (spec.tx !== undefined) {
    try {
      await assertInTransaction(spec.tx);
    } catch (error) {
      throw error instanceof EffectsError ? error : mapDbError(error);
    }
  }
}

function resultOf<T>(
  spec: StepSpec,
  acquired: Acquired,
  kind: EffectResult<T>["result"],
  outcome: T | undefined,
  attempt: number,
  resumed: boolean,
): EffectResult<T> {
  const { tenant, key } = spec;
  let providerKey: string | undefined;
  return {
    result: kind,
    duplicate: kind !== "ran",
    outcome,
    tenant,
    key,
    // Hashed on first read: most steps never call a provider, and a sha256 per step was 2 % of a
    // transactional delivery's CPU in bench:e2e (docs/benchmarks.md, 2026-12-06).
    get providerKey() {
      providerKey ??= providerKeyFor(tenant, key);
      return providerKey;
    },
    attempt,
    resumed,
    firstClaimedAt: acquired.row.createdAt,
    gapSeconds: acquired.row.gapSeconds,
  };
}

/**
 * Phase 1 (Powertools: determineResultFromIdempotencyRecord): the effect exists and is settled.
 * A duplicate gets the stored outcome (null for a step that returned null or nothing); an effect
 * recorded without an outcome gets the typed error its first run got.
 */
export function answerExisting<T>(
  core: EffectsCore,
  spec: StepSpec,
  acquired: Exclude<Acquired, { kind: "owned" }>,
  logResult: LogResult,
): EffectResult<T> {
  const { row } = acquired;
  if (acquired.kind === "abandoned" || row.status === "abandoned") {
    if (acquired.kind === "abandoned") logResult("abandoned", { effectAttempt: row.attempt, reason: row.error }, "warn");
    else logResult("duplicate", { effectAttempt: row.attempt, status: row.status, gapSeconds: row.gapSeconds });
    return resultOf<T>(spec, acquired, acquired.kind === "abandoned" ? "abandoned" : "duplicate", undefined, row.attempt, false);
  }
  const marker = parseMarker(row.error);
  if (marker) {
    logResult("duplicate", { effectAttempt: row.attempt, gapSeconds: row.gapSeconds, err: row.error }, "warn");
    if (marker.kind === "too_large") throw new OutcomeTooLargeError(spec.key, marker.bytes, core.opts.maxOutcomeBytes);
    throw new OutcomeNotStorableError(spec.key, marker.reason, true);
  }
  logResult("duplicate", { effectAttempt: row.attempt, status: row.status, gapSeconds: row.gapSeconds });
  return resultOf(spec, acquired, "duplicate", (row.outcome ?? null) as T, row.attempt, false);
}

/**
 * What an owned step's failure records: the failure, and a unique
 * violation the step did not catch with its constraint (metrics, rollups, the log line).
 */
async function recordStepFailure(
  core: EffectsCore,
  spec: StepSpec,
  claim: OwnedClaim,
  error: unknown,
  logResult: LogResult,
): Promise<void> {
  recordOnce(claim.sql, () => {
    core.metrics.stepFailures.inc({ job_type: spec.jobType });
    core.rollups?.add(spec.jobType, { failed: 1 });
  });
  const constraint = uniqueViolationConstraint(error);
  if (constraint !== null) {
    await recordUncaughtViolation(core, {
      tenant: spec.tenant,
      key: spec.key,
      jobType: spec.jobType,
      constraint,
      messageId: spec.messageId,
      error,
    });
    logResult("uncaught_unique_violation", { effectAttempt: claim.attempt, constraint }, "error");
  } else {
    logResult("failed", { effectAttempt: claim.attempt, err: error instanceof Error ? error.message : String(error) }, "warn");
  }
}

/**
 * Ends an owned claim whose step threw, outside a transaction (in one, the rollback undoes the
 * claim): released as failed, so the next delivery retries at once. Except at most once: a throw
 * does not say the effect did not happen (the mailer took the email, then its reply was lost or
 * it answered 500), so the claim is abandoned, never run again, unless the step threw
 * EffectNotAppliedError. A release that fails is logged: the lease then runs out and the next
 * claim decides (an at-most-once claim is abandoned there too).
 */
async function releaseAfterThrow(core: EffectsCore, spec: StepSpec, claim: Claim, error: unknown, logResult: LogResult) {
  const abandon = spec.policy === "at_most_once" && !(error instanceof EffectNotAppliedError);
  try {
    if (abandon) {
      await claim.abandon(error);
      logResult("abandoned", { effectAttempt: claim.attempt, reason: "the step threw; its effect may have happened" }, "warn");
    } else {
      await claim.fail(error);
    }
  } catch (releaseError) {
    core.logger.error(
      { err: releaseError },
      abandon ? "could not abandon an at-most-once claim" : "could not release a failed claim",
    );
  }
}

/** Where an owned claim's outcome goes: stored alone, or with its batch's others (onceMany). */
export interface OutcomeSink {
  /** Stores the encoded outcome: the marker's typed error for an outcome that cannot be kept, else null. */
  store(claim: OwnedClaim, encoded: EncodedOutcome): Promise<EffectsError | null>;
  /** The claim's step threw: it will store nothing. */
  skip(): void;
}

/** Each claim's outcome in its own statement (OwnedClaim.storeEncoded). */
const STORE_ALONE: OutcomeSink = { store: (claim, encoded) => claim.storeEncoded(encoded), skip: () => {} };

/**
 * Phases 2 and 3 (Powertools: getFunctionResult, saveSuccess), for once, job steps and onceMany:
 * this delivery owns the claim, so run the step. A throw is counted, logged, released outside a
 * transaction (in one, the rollback undoes the claim: releaseAfterThrow) and rethrown. Otherwise the
 * outcome is stored with the claim; one that cannot be stored is recorded as completed with its
 * marker (the step is never run again) and its typed error returned for the caller to throw: after
 * the commit when the library owns the transaction, so the step's writes and the marker commit together.
 */
export async function runOwned<T>(
  core: EffectsCore,
  spec: StepSpec,
  acquired: Extract<Acquired, { kind: "owned" }>,
  run: () => unknown,
  logResult: LogResult,
  sink: OutcomeSink,
): Promise<{ result: EffectResult<T> } | { error: EffectsError }> {
  const { claim } = acquired;
  let value: unknown;
  try {
    value = await run();
  } catch (error) {
    sink.skip(); // first, so a batch's store does not wait for this key's records and release
    await recordStepFailure(core, spec, claim, error, logResult);
    if (!claim.sql.inTransaction) await releaseAfterThrow(core, spec, claim, error, logResult);
    throw error;
  }
  const encoded = encodeOutcome(value, core.opts.maxOutcomeBytes);
  let markerError: EffectsError | null;
  try {
    markerError = await sink.store(claim, encoded);
  } catch (error) {
    logResult(
      error instanceof EffectsError ? error.code.toLowerCase() : "complete_failed",
      { effectAttempt: claim.attempt },
      "warn",
    );
    throw error;
  }
  if (!encoded.ok) {
    const result = encoded.marker.startsWith("outcome_too_large") ? "outcome_too_large" : "outcome_not_storable";
    logResult(result, { effectAttempt: claim.attempt, reason: encoded.reason }, "error");
    return { error: markerError ?? claim.markerError(encoded) };
  }
  logResult("ran", { effectAttempt: claim.attempt, how: claim.how });
  return { result: resultOf(spec, acquired, "ran", JSON.parse(encoded.json) as T, claim.attempt, claim.attempt > 1) };
}

/**
 * The one line per execution of a step that started at `started` (performance.now()). Built field
 * by field (no object spreads: this runs on every delivery, duplicates included) and not at all
 * when the level is off.
 */
export function stepLog(core: EffectsCore, spec: StepSpec, started: number): LogResult {
  const logger = core.logger;
  return (result, extra, level = "info") => {
    if (!logger.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = logFields(spec);
    fields.result = result;
    fields.durationMs = Math.round(performance.now() - started);
    if (extra) for (const name in extra) fields[name] = extra[name];
    logger[level](fields, `effect ${result}`);
  };
}

/**
 * One effect, start to finish: claim (one round trip), then answer an existing effect, or run the
 * owned claim and store its outcome. Logs one line per execution with tenant, key, job type,
 * message id, attempt and result.
 */
export async function runStep<T>(core: EffectsCore, spec: StepSpec, fn: StepFn<T>): Promise<EffectResult<T>> {
  await beforeClaim(core, spec);
  const logResult = stepLog(core, spec, performance.now());
  const trace = await traceStep(spec);

  const body = async (sql: Sql, tx: TransactionHandle | undefined) => {
    let acquired: Acquired;
    try {
      acquired = await (trace ? trace.claim(() => acquire(core, sql, spec)) : acquire(core, sql, spec));
    } catch (error) {
      if (error instanceof EffectsError) logResult(error.code.toLowerCase(), { err: error.message }, "warn");
      throw error;
    }
    if (acquired.kind === "duplicate" && acquired.ownCommit) return { result: ranInEarlierRun<T>(spec, acquired, logResult) };
    if (acquired.kind !== "owned") return { result: answerExisting<T>(core, spec, acquired, logResult) };
    const run = () => fn(acquired.claim, tx);
    return runOwned<T>(core, spec, acquired, trace ? () => trace.within(run) : run, logResult, STORE_ALONE);
  };

  let settled: Awaited<ReturnType<typeof body>>;
  try {
    if (spec.policy !== "transactional") settled = await body(sqlFor(core.opts.db, false, core.opts.schema), undefined);
    else if (spec.tx) settled = await body(sqlFor(spec.tx, true, core.opts.schema), spec.tx);
    else settled = await inOwnTransaction(core, body);
  } catch (error) {
    trace?.end({ error });
    throw error;
  }
  if ("error" in settled) {
    trace?.end({ error: settled.error });
    throw settled.error;
  }
  trace?.end({ result: settled.result.result });
  return settled.result;
}

/**
 * The rerun of an owned transaction found the effect its earlier run committed (the COMMIT's reply
 * was lost): this delivery ran the step, once, and gets its stored outcome as a run, not as a
 * duplicate.
 */
function ranInEarlierRun<T>(
  spec: StepSpec,
  acquired: Extract<Acquired, { kind: "duplicate" }>,
  logResult: LogResult,
): EffectResult<T> {
  const { row } = acquired;
  logResult("ran", { effectAttempt: row.attempt, how: "commit_reply_lost" });
  return resultOf(spec, acquired, "ran", (row.outcome ?? null) as T, row.attempt, row.attempt > 1);
}

/**
 * A transactional step in a transaction the library opens. We own it, so a transient failure
 * (deadlock, serialization, the connection cut, even under the step's own queries) reruns all of
 * it: the claim and the step's writes roll back together, and a COMMIT whose reply was lost is
 * found by the rerun's claim, made with the same owner, as this delivery's own. Only the last
 * run's bookkeeping counts (RerunnableTransaction). When the retries run out, a connection-level failure
 * is reported as EffectsDatabaseError (disposition retry), not as the handler's error.
 */
async function inOwnTransaction<R>(core: EffectsCore, body: (sql: Sql, tx: TransactionHandle) => Promise<R>): Promise<R> {
  const run: RerunnableTransaction = { owner: `${core.opts.workerId}:${randomUUID()}`, pendingRecords: [] };
  try {
    return await withRetry(() => {
      run.pendingRecords = [];
      // The body claims before it runs the step, so BEGIN can travel with the claim.
      return inNewTransaction(core.opts.db, (sql, tx) => body({ ...sql, rerunnable: run }, tx), {
        schema: core.opts.schema,
        firstStatementBegins: true,
      });
    });
  } catch (error) {
    if (error instanceof EffectsError || !isConnectionError(error)) throw error;
    throw mapDbError(error);
  } finally {
    for (const record of run.pendingRecords) record();
  }
}
