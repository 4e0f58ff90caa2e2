import type pg from "pg";
import type { Registry } from "prom-client";
import { acquire, type Claim } from "./claim";
import type { EffectsCore } from "./core";
import { type EffectsDb, sqlFor, type TransactionHandle } from "./db";
import { countDelivery, toPublishedAt } from "./delivery";
import { DuplicateLedger } from "./duplicates";
import { toMs } from "./duration";
import { EffectsClosedError } from "./errors";
import { type JobContext, type JobDelivery, type JobResult, job } from "./job";
import { createMetrics, defaultRegistry } from "./metrics";
import { DB_POLICY, type OnceInput, once } from "./once";
import { type EffectsOptions, type ResolvedOptions, resolveOptions } from "./options";
import { startRetentionParts } from "./retention-parts";
import { Rollups } from "./rollups";
import { checkStepKey, type EffectResult } from "./step";

/** The transaction handle a transactional step receives for a given db. */
export type TxOf<Db> = Db extends pg.Pool
  ? pg.PoolClient
  : Db extends { $transaction<R>(fn: (tx: infer T) => Promise<R>, options?: infer _O): Promise<R> }
    ? T
    : TransactionHandle;

/** effects.claim(): the low-level form, for adapters that complete later themselves. */
export type ClaimOutcome =
  | { kind: "owned"; claim: Claim }
  | { kind: "duplicate"; outcome: unknown; attempt: number; gapSeconds: number | null; status: "completed" | "abandoned" }
  | { kind: "abandoned"; attempt: number };

export interface Effects<Tx = TransactionHandle> {
  /** One effect: runs `fn` at most once per (tenant, key), or returns the stored outcome. */
  once<T>(input: OnceInput<Tx>, fn: (claim: Claim, tx: Tx | undefined) => T | Promise<T>): Promise<EffectResult<Awaited<T>>>;
  /** A job with several keyed steps (external / transaction / atMostOnce); a retry resumes. */
  job<R>(delivery: JobDelivery, handler: (job: JobContext<Tx>) => R | Promise<R>): Promise<JobResult<Awaited<R>>>;
  /**
   * Low level: claim only (one round trip, waiting for in-flight duplicates up to `wait`). When
   * owned, call claim.complete(outcome) or claim.fail(error) yourself.
   */
  claim(input: Omit<OnceInput<Tx>, "policy"> & { policy?: OnceInput<Tx>["policy"] }): Promise<ClaimOutcome>;
  /** Writes pending per-minute rollups and duplicate bookkeeping now; true when all were written. */
  flush(): Promise<boolean>;
  /**
   * Resolves once this worker is registered and has read the database retention (at once when
   * `register` is off); rejects with a one-line RetentionConfigError when its maxRetryWindow
   * exceeds the retention: the worker must not start.
   */
  ready(): Promise<void>;
  /** Stops new claims and the flush timers, then flushes. Call on shutdown. Does not close `db`. */
  close(): Promise<void>;
  readonly registry: Registry;
  readonly options: Readonly<ResolvedOptions>;
  readonly demo: boolean;
}

export function createEffects<Db extends EffectsDb>(options: EffectsOptions & { db: Db }): Effects<TxOf<Db>> {
  const opts = resolveOptions(options);
  const registry = opts.registry ?? defaultRegistry();
  const metrics = createMetrics(registry);
  const logger = opts.logger;
  const rollups = opts.rollups
    ? new Rollups(opts.db, { demo: opts.demo, logger, onFlushFailure: () => metrics.rollupFlushFailures.inc() })
    : null;
  rollups?.start(opts.flushIntervalMs);
  const duplicates = new DuplicateLedger(opts.db, { logger, onFlushFailure: () => metrics.rollupFlushFailures.inc() });
  duplicates.start(opts.flushIntervalMs);
  const core: EffectsCore = { opts, metrics, rollups, duplicates, logger, closed: false };
  const retention = startRetentionParts(core, registry);

  return {
    once: (input, fn) => once(core, input, fn),
    job: (delivery, handler) => job(core, delivery, handler),
    async claim(input) {
      if (core.closed) throw new EffectsClosedError("effects.close() was called; no new claims");
      countDelivery(core, input.jobType, input);
      const spec = {
        tenant: input.tenant,
        key: input.key,
        jobType: input.jobType,
        policy: input.policy ? DB_POLICY[input.policy] : ("once" as const),
        messageId: input.messageId ?? null,
        deliveryAttempt: input.attempt ?? null,
        publishedAt: toPublishedAt(input.publishedAt),
        payload: input.payload,
        leaseMs: input.lease === undefined ? opts.leaseMs : toMs(input.lease, "lease"),
        waitMs: input.wait === undefined ? opts.waitMs : toMs(input.wait, "wait"),
      };
      checkStepKey(core, spec, logger);
      const sql = input.tx ? sqlFor(input.tx as TransactionHandle, true) : sqlFor(opts.db, false);
      const acquired = await acquire(core, sql, spec);
      if (acquired.kind === "owned") return { kind: "owned", claim: acquired.claim };
      if (acquired.kind === "abandoned") return { kind: "abandoned", attempt: acquired.row.attempt };
      return {
        kind: "duplicate",
        outcome: acquired.row.outcome,
        attempt: acquired.row.attempt,
        gapSeconds: acquired.row.gapSeconds,
        status: acquired.row.status === "abandoned" ? "abandoned" : "completed",
      };
    },
    async flush() {
      const [a, b] = await Promise.all([duplicates.flush(), rollups?.flush() ?? true]);
      return a && b;
    },
    ready: () => retention.ready,
    async close() {
      core.closed = true;
      await retention.stop();
      rollups?.stop();
      duplicates.stop();
      await Promise.all([duplicates.flush(), rollups?.flush()]);
    },
    registry,
    options: opts,
    demo: opts.demo,
  };
}
