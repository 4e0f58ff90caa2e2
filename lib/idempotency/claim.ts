import { randomUUID } from "node:crypto";
import { type ClaimResultKind, type ClaimRow, type DbPolicy, runClaim } from "./claim-sql";
import { type ClaimRef, runComplete, runExtendLease, runFail } from "./complete-sql";
import type { EffectsCore } from "./core";
import type { Sql } from "./db";
import { mapDbError } from "./db-errors";
import { type Duration, toMs } from "./duration";
import { EffectInFlightError, EffectKeyReuseError, LeaseLostError, OutcomeTooLargeError, RetentionWindowError } from "./errors";
import { providerKeyFor, requestHash } from "./keys";
import { withRetry } from "./retryable";
import { claimWithWait } from "./wait";

export interface ClaimSpec {
  tenant: string;
  key: string;
  jobType: string;
  policy: DbPolicy;
  messageId: string | null;
  publishedAt: Date | null;
  payload: unknown;
  leaseMs: number;
  waitMs: number;
}

/** Runs a statement of ours: retried in one place when we own the transaction, never inside the caller's. */
export async function runStatement<T>(sql: Sql, fn: () => Promise<T>): Promise<T> {
  try {
    return sql.inTransaction ? await fn() : await withRetry(fn);
  } catch (error) {
    throw mapDbError(error);
  }
}

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
    const ms = by === undefined ? this.spec.leaseMs : toMs(by, "extendLease");
    const until = await runStatement(this.sql, () => runExtendLease(this.sql, this.ref, ms));
    if (!until) {
      this.core.metrics.leaseLost.inc({ job_type: this.jobType });
      throw new LeaseLostError(this.key, this.attempt);
    }
    this.leaseUntil = until;
    return until;
  }

  /**
   * Low-level (effects.claim): stores `outcome` as JSON and ends the claim. Throws
   * OutcomeTooLargeError over maxOutcomeBytes, LeaseLostError when another delivery took it over.
   */
  async complete(outcome: unknown): Promise<void> {
    const json = JSON.stringify(outcome === undefined ? null : outcome) ?? "null";
    const bytes = Buffer.byteLength(json);
    if (bytes > this.core.opts.maxOutcomeBytes) throw new OutcomeTooLargeError(this.key, bytes, this.core.opts.maxOutcomeBytes);
    await this.completeJson(json);
  }

  /** Stores the outcome (JSON text). Throws LeaseLostError when another delivery took the claim over. */
  async completeJson(outcomeJson: string, error: string | null = null): Promise<void> {
    const ok = await runStatement(this.sql, () => runComplete(this.sql, this.ref, outcomeJson, error));
    if (!ok) {
      this.core.metrics.leaseLost.inc({ job_type: this.jobType });
      throw new LeaseLostError(this.key, this.attempt);
    }
  }

  /** Releases the claim as failed so the next delivery retries it at once. */
  async fail(error: unknown): Promise<void> {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    await runStatement(this.sql, () => runFail(this.sql, this.ref, message));
  }
}

export type Acquired =
  | { kind: "owned"; row: ClaimRow; claim: Claim }
  | { kind: "duplicate"; row: ClaimRow }
  | { kind: "abandoned"; row: ClaimRow };

/**
 * One claim, with the bounded wait for an in-flight duplicate. Counts the final result; throws
 * the typed errors for in-flight (after the wait), key reuse and an expired retention.
 */
export async function acquire(core: EffectsCore, sql: Sql, spec: ClaimSpec): Promise<Acquired> {
  const { metrics, rollups, opts } = core;
  const labels = { job_type: spec.jobType };
  const owner = `${opts.workerId}:${randomUUID()}`;
  const hash = requestHash(spec.payload);
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
    };
    return sql.inTransaction ? runClaim(sql, params) : withRetry(() => runClaim(sql, params));
  };
  const row = await claimWithWait(claimOnce, spec.waitMs, { abortsOnLockTimeout: sql.inTransaction }).catch((error: unknown) => {
    throw mapDbError(error);
  });

  const seconds = (performance.now() - started) / 1000;
  metrics.claimDuration.observe(labels, seconds);
  metrics.claims.inc({ job_type: spec.jobType, result: row.result });
  rollups?.addClaim(spec.jobType, seconds);

  switch (row.result) {
    case "claimed":
    case "retry":
      return { kind: "owned", row, claim: new Claim(core, sql, spec, row) };
    case "takeover":
      metrics.takeovers.inc(labels);
      rollups?.add(spec.jobType, { takeovers: 1 });
      return { kind: "owned", row, claim: new Claim(core, sql, spec, row) };
    case "duplicate":
      metrics.duplicateSuppressions.inc(labels);
      if (row.createdAt) core.duplicates.record(spec.tenant, spec.key, row.createdAt, row.gapSeconds, spec.messageId);
      if (row.gapSeconds !== null) {
        metrics.redeliveryGap.observe(labels, row.gapSeconds);
        rollups?.observeGap(spec.jobType, row.gapSeconds);
      }
      rollups?.add(spec.jobType, { suppressed: 1 });
      rollups?.addTenantSuppression(spec.tenant, spec.jobType);
      return { kind: "duplicate", row };
    case "abandoned":
      metrics.abandoned.inc(labels);
      rollups?.add(spec.jobType, { abandoned: 1 });
      return { kind: "abandoned", row };
    case "in_flight": {
      rollups?.add(spec.jobType, { inFlight: 1 });
      const leaseLeft = row.leaseUntil ? row.leaseUntil.getTime() - row.dbNow.getTime() : spec.leaseMs;
      const retryAfterMs = Math.min(Math.max(leaseLeft, 1000), Math.max(spec.leaseMs, 1000));
      throw new EffectInFlightError(spec.tenant, spec.key, row.leaseUntil, retryAfterMs);
    }
    case "key_reuse":
      metrics.keyReuse.inc(labels);
      rollups?.add(spec.jobType, { keyReuse: 1 });
      throw new EffectKeyReuseError(spec.tenant, spec.key, row.firstMessageId);
    case "retention_expired":
      throw new RetentionWindowError(spec.key, spec.publishedAt ?? new Date(0), opts.retentionMs);
    default:
      throw new Error(`unexpected claim result ${String(row.result)}`);
  }
}
