import type { Logger } from "pino";
import { acquire, type Claim, type ClaimSpec } from "./claim";
import type { DbPolicy } from "./claim-sql";
import type { EffectsCore } from "./core";
import { inNewTransaction, type Sql, sqlFor, type TransactionHandle } from "./db";
import { EffectsClosedError, EffectsError, OutcomeTooLargeError } from "./errors";
import { providerKeyFor, validateKey, validateTenant } from "./keys";
import { withRetry } from "./retryable";
import { uniqueViolationConstraint } from "./violations";

/** What effects.once and each job step resolve to. */
export interface EffectResult<T> {
  /**
   * ran: this delivery ran the step. duplicate: it had completed before; `outcome` is the stored one.
   * abandoned: an at-most-once step whose owner died mid-way; not run again, no outcome.
   */
  result: "ran" | "duplicate" | "abandoned";
  /** True when the step did not run in this delivery (duplicate or abandoned). */
  duplicate: boolean;
  /** The step's return value round-tripped through JSON, the same shape on every delivery. */
  outcome: T | undefined;
  tenant: string;
  key: string;
  providerKey: string;
  /** The effect's attempt: 1 on the first claim, +1 per takeover or retry. */
  attempt: number;
  /** True when this run took over an expired lease or retried a failed attempt. */
  resumed: boolean;
  /** When the effect was first claimed. */
  firstClaimedAt: Date | null;
  /** Seconds from the first claim to this delivery, for duplicates. */
  gapSeconds: number | null;
}

export interface StepSpec {
  tenant: string;
  key: string;
  jobType: string;
  policy: DbPolicy;
  messageId: string | null;
  deliveryAttempt: number | null;
  publishedAt: Date | null;
  payload: unknown;
  leaseMs: number;
  waitMs: number;
  /** transactional only: the caller's open transaction to claim in. */
  tx?: TransactionHandle;
}

/** The step; its resolved value (T) becomes the outcome. */
export type StepFn<_T> = (claim: Claim, tx: TransactionHandle | undefined) => unknown;

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

/** Validates the key, and counts (and warns about) keys equal to the broker's message id. */
export function checkStepKey(core: EffectsCore, spec: StepSpec, logger: Logger): void {
  validateTenant(spec.tenant);
  validateKey(spec.key);
  const afterStep = spec.key.slice(spec.key.indexOf(":") + 1);
  if (spec.messageId && (spec.key === spec.messageId || afterStep === spec.messageId)) {
    core.metrics.messageIdKeys.inc({ job_type: spec.jobType });
    core.rollups?.add(spec.jobType, { messageIdKeys: 1 });
    logger.warn(
      logFields(spec),
      "effect key is the broker's message id: a re-published message gets a new id and would run again; key on the business fact",
    );
  }
}

/**
 * One effect, start to finish: claim (one round trip), then either return the stored outcome or
 * run the step and store its outcome. Logs one line per execution with tenant, key, job type,
 * message id, attempt and result.
 */
export async function runStep<T>(core: EffectsCore, spec: StepSpec, fn: StepFn<T>): Promise<EffectResult<T>> {
  if (core.closed) throw new EffectsClosedError("effects.close() was called; no new claims");
  const logger = core.logger;
  checkStepKey(core, spec, logger);
  const started = performance.now();
  // One line per execution. Built field by field (no object spreads: this runs on every delivery,
  // duplicates included) and not at all when the level is off.
  const done = (result: string, extra?: Record<string, unknown>, level: "info" | "warn" | "error" = "info") => {
    if (!logger.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = logFields(spec);
    fields.result = result;
    fields.durationMs = Math.round(performance.now() - started);
    if (extra) for (const name in extra) fields[name] = extra[name];
    logger[level](fields, `effect ${result}`);
  };

  const body = async (sql: Sql, tx: TransactionHandle | undefined): Promise<EffectResult<T>> => {
    const claimSpec: ClaimSpec = spec;
    let acquired: Awaited<ReturnType<typeof acquire>>;
    try {
      acquired = await acquire(core, sql, claimSpec);
    } catch (error) {
      if (error instanceof EffectsError) done(error.code.toLowerCase(), { err: error.message }, "warn");
      throw error;
    }
    const result = (
      kind: EffectResult<T>["result"],
      outcome: T | undefined,
      attempt: number,
      resumed: boolean,
    ): EffectResult<T> => ({
      result: kind,
      duplicate: kind !== "ran",
      outcome,
      tenant: spec.tenant,
      key: spec.key,
      providerKey: providerKeyFor(spec.tenant, spec.key),
      attempt,
      resumed,
      firstClaimedAt: acquired.row.createdAt,
      gapSeconds: acquired.row.gapSeconds,
    });
    if (acquired.kind !== "owned") {
      const { row } = acquired;
      if (acquired.kind === "abandoned") {
        done("abandoned", { effectAttempt: row.attempt, reason: row.error }, "warn");
        return result("abandoned", undefined, row.attempt, false);
      }
      const tooLarge = /^outcome_too_large: (\d+)/.exec(row.error ?? "");
      if (tooLarge) {
        done("duplicate", { effectAttempt: row.attempt, gapSeconds: row.gapSeconds, err: "outcome too large" }, "warn");
        throw new OutcomeTooLargeError(spec.key, Number(tooLarge[1]), core.opts.maxOutcomeBytes);
      }
      done("duplicate", { effectAttempt: row.attempt, status: row.status, gapSeconds: row.gapSeconds });
      return result(
        "duplicate",
        (row.status === "abandoned" ? undefined : (row.outcome ?? undefined)) as T | undefined,
        row.attempt,
        false,
      );
    }

    const { claim } = acquired;
    let value: T;
    try {
      value = (await fn(claim, tx)) as T;
    } catch (error) {
      const labels = { job_type: spec.jobType };
      core.metrics.stepFailures.inc(labels);
      core.rollups?.add(spec.jobType, { failed: 1 });
      const constraint = uniqueViolationConstraint(error);
      if (constraint !== null) {
        core.metrics.uncaughtViolations.inc({ ...labels, constraint });
        core.rollups?.add(spec.jobType, { uncaughtViolations: 1 });
        core.rollups?.addViolation(spec.jobType, constraint);
        core.rollups?.addTenantViolation(spec.tenant, spec.jobType, constraint, spec.key);
        done("uncaught_unique_violation", { effectAttempt: claim.attempt, constraint }, "error");
      } else {
        done("failed", { effectAttempt: claim.attempt, err: error instanceof Error ? error.message : String(error) }, "warn");
      }
      // In a transaction the rollback undoes the claim; outside, release it for the next delivery.
      if (!sql.inTransaction) {
        await claim
          .fail(error)
          .catch((failError: unknown) => logger.error({ err: failError }, "could not release a failed claim"));
      }
      throw error;
    }

    const json = JSON.stringify(value === undefined ? null : value) ?? "null";
    const bytes = Buffer.byteLength(json);
    if (bytes > core.opts.maxOutcomeBytes) {
      // The step ran; outside a transaction its effect happened, so record it as done (with no
      // outcome) rather than let a retry repeat it. In a transaction the throw rolls it all back.
      if (!sql.inTransaction) await claim.completeJson("null", `outcome_too_large: ${bytes} bytes`);
      done("outcome_too_large", { effectAttempt: claim.attempt, bytes }, "error");
      throw new OutcomeTooLargeError(spec.key, bytes, core.opts.maxOutcomeBytes);
    }
    try {
      await claim.completeJson(json);
    } catch (error) {
      done(
        error instanceof EffectsError ? error.code.toLowerCase() : "complete_failed",
        { effectAttempt: claim.attempt },
        "warn",
      );
      throw error;
    }
    done("ran", { effectAttempt: claim.attempt, how: claim.how });
    return result("ran", JSON.parse(json) as T, claim.attempt, claim.how !== "claimed");
  };

  if (spec.policy !== "transactional") return body(sqlFor(core.opts.db, false), undefined);
  if (spec.tx) return body(sqlFor(spec.tx, true), spec.tx);
  // We own this transaction, so a transient failure (deadlock, serialization) reruns all of it:
  // the claim and the caller's writes roll back together.
  return withRetry(() => inNewTransaction(core.opts.db, (sql, tx) => body(sql, tx)));
}
