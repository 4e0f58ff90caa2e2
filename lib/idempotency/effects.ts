import type pg from "pg";
import type { Registry } from "prom-client";
import { type Acquired, acquire, type Claim } from "./claim";
import { type BatchClaimInput, type BatchCompleteAnswer, claimMany, completeMany } from "./claim-batch";
import { createCoalescer } from "./coalescer";
import type { EffectsCore } from "./core";
import { type EffectsDb, sqlFor, type TransactionHandle } from "./db";
import { countDelivery } from "./delivery";
import { DuplicateLedger } from "./duplicates";
import { InvalidEffectInputError } from "./errors";
import { type JobContext, type JobDelivery, type JobResult, job } from "./job";
import { createMetrics, registryFor } from "./metrics";
import { type OnceInput, once } from "./once";
import { type OnceManyAnswer, onceMany } from "./once-many";
import { type EffectsOptions, type ResolvedOptions, resolveOptions } from "./options";
import { parseMarker } from "./outcome";
import { startRetentionParts } from "./retention-parts";
import { Rollups } from "./rollups";
import { buildStepSpec, checkDelivery, checkObject } from "./spec";
import { beforeClaim, type EffectResult } from "./step";
import { storeFor } from "./store-for";
import { DeliveryTimeline } from "./timeline";
import { traceClaim } from "./tracing";

/**
 * The transaction handle a transactional step receives for a given db: a pg PoolClient, Prisma's
 * transaction client, or the connection a mysql2/promise pool hands out (its own type, inferred).
 */
export type TxOf<Db> = Db extends pg.Pool
  ? pg.PoolClient
  : Db extends { $transaction<R>(fn: (tx: infer T) => Promise<R>, options?: infer _O): Promise<R> }
    ? T
    : Db extends { getConnection(): Promise<infer C> }
      ? C
      : TransactionHandle;

/** effects.claim(): the low-level form, for adapters that complete later themselves. */
export type ClaimOutcome =
  | { kind: "owned"; claim: Claim }
  | {
      kind: "duplicate";
      /** The stored outcome; null when there is none (see `missing`). */
      outcome: unknown;
      attempt: number;
      gapSeconds: number | null;
      status: "completed" | "abandoned";
      /**
       * Why a completed effect has no outcome: its outcome was over maxOutcomeBytes (too_large) or
       * could not be stored as JSON (not_storable), with the reason recorded on the row. Null otherwise.
       */
      missing: { kind: "too_large" | "not_storable"; detail: string } | null;
    }
  | { kind: "abandoned"; attempt: number };

/** One key's answer from effects.claimMany(): what claim() returns, or what it would have thrown. */
export type BatchClaimOutcome = ClaimOutcome | { kind: "error"; error: unknown };

function outcomeOf(acquired: Acquired): ClaimOutcome {
  if (acquired.kind === "owned") return { kind: "owned", claim: acquired.claim };
  if (acquired.kind === "abandoned") return { kind: "abandoned", attempt: acquired.row.attempt };
  const marker = parseMarker(acquired.row.error);
  return {
    kind: "duplicate",
    outcome: acquired.row.outcome ?? null,
    attempt: acquired.row.attempt,
    gapSeconds: acquired.row.gapSeconds,
    status: acquired.row.status === "abandoned" ? "abandoned" : "completed",
    missing:
      marker === null || acquired.row.status === "abandoned"
        ? null
        : marker.kind === "too_large"
          ? { kind: "too_large", detail: `${marker.bytes} bytes` }
          : { kind: "not_storable", detail: marker.reason },
  };
}

export interface Effects<Tx = TransactionHandle> {
  /** One effect: runs `fn` at most once per (tenant, key), or returns the stored outcome. */
  once<T, X = Tx>(
    input: OnceInput<X>,
    fn: (claim: Claim, tx: X | undefined) => T | Promise<T>,
  ): Promise<EffectResult<Awaited<T>>>;
  /**
   * Many effects at once (a broker's fetched batch), each as once() would run it, in two statements
   * for the whole batch: the claims together, then the outcomes together. Each input answered on
   * its own, in input order; a key in flight elsewhere is answered EffectInFlightError without
   * waiting. External and at-most-once steps only (not transactional).
   */
  onceMany<T>(
    inputs: readonly BatchClaimInput[],
    fn: (claim: Claim, index: number) => T | Promise<T>,
  ): Promise<OnceManyAnswer<Awaited<T>>[]>;
  /** A job with several keyed steps (external / transaction / atMostOnce); a retry resumes. */
  job<R>(delivery: JobDelivery, handler: (job: JobContext<Tx>) => R | Promise<R>): Promise<JobResult<Awaited<R>>>;
  /**
   * Low level: claim only (one round trip, waiting for in-flight duplicates up to `wait`). When
   * owned, call claim.complete(outcome) or claim.fail(error) yourself.
   */
  claim<X = Tx>(input: Omit<OnceInput<X>, "policy"> & { policy?: OnceInput<X>["policy"] }): Promise<ClaimOutcome>;
  /**
   * Low level, batched: claims every input in one round trip and one commit, each key answered on
   * its own (in input order) exactly as claim() would answer it, except that an in-flight key is
   * not waited for and a thrown error becomes `{ kind: "error", error }` for that key only (key
   * reuse, in flight, invalid input). External and at-most-once steps only (not transactional).
   */
  claimMany(inputs: readonly BatchClaimInput[]): Promise<BatchClaimOutcome[]>;
  /**
   * Low level, batched: stores the outcomes of owned claims (from claimMany) in one round trip and
   * one commit, each answered on its own (in input order) as claim.complete() would answer it.
   */
  completeMany(items: readonly { claim: Claim; outcome: unknown }[]): Promise<BatchCompleteAnswer[]>;
  /** Writes pending per-minute rollups, duplicate bookkeeping and timeline rows now; true when all were written. */
  flush(): Promise<boolean>;
  /**
   * Resolves once this worker is registered and has read the database retention (at once when
   * `register` is off); rejects with a one-line RetentionConfigError when its maxRetryWindow
   * exceeds the retention: the worker must not start.
   */
  ready(): Promise<void>;
  /** Stops new claims and the flush timers, then flushes. Call on shutdown. Does not close `db`. */
  close(): Promise<void>;
  /** Where the idem_* metrics are registered; undefined when prom-client is not installed and none was given. */
  readonly registry: Registry | undefined;
  readonly options: Readonly<ResolvedOptions>;
}

export function createEffects<Db extends EffectsDb>(options: EffectsOptions & { db: Db }): Effects<TxOf<Db>> {
  const opts = resolveOptions(options);
  const registry = registryFor(opts.registry);
  const metrics = createMetrics(registry);
  metrics.workerInfo.set({ worker_name: opts.workerName }, 1);
  const logger = opts.logger;
  // PostgreSQL (one server or Citus) or MySQL / MariaDB, by the driver of `db`.
  const store = storeFor(opts.db);
  const rollups = opts.rollups
    ? new Rollups(opts.db, {
        marked: opts.marked,
        schema: opts.schema,
        store,
        logger,
        onFlushFailure: () => metrics.rollupFlushFailures.inc(),
      })
    : null;
  rollups?.start(opts.flushIntervalMs);
  const duplicates = new DuplicateLedger(opts.db, {
    schema: opts.schema,
    store,
    logger,
    onFlushFailure: () => metrics.rollupFlushFailures.inc(),
    onDropped: (entries) => metrics.duplicateCountsDropped.inc(entries),
  });
  duplicates.start(opts.flushIntervalMs);
  const timeline = opts.timeline
    ? new DeliveryTimeline(opts.db, {
        schema: opts.schema,
        store,
        workerId: opts.workerId,
        marked: opts.marked,
        logger,
        onDropped: (reason, rows) => metrics.timelineDropped.inc({ reason }, rows),
      })
    : null;
  timeline?.start(opts.flushIntervalMs);
  const core: EffectsCore = {
    opts,
    metrics,
    rollups,
    duplicates,
    timeline,
    logger,
    closed: false,
    coalescer: opts.coalesce ? createCoalescer(sqlFor(opts.db, false, opts.schema), store) : null,
    store,
  };
  const retention = startRetentionParts(core, registry);
  // One server or Citus: looked up at start, so the first claim does not wait for it. A failed look
  // is made again before the next claim (beforeClaim), which then reports its error.
  store.prepare(opts.db, opts.schema).catch(() => {});

  return {
    once: (input, fn) => once(core, input, fn),
    onceMany: (inputs, fn) => onceMany(core, inputs, fn),
    job: (delivery, handler) => job(core, delivery, handler),
    async claim(input) {
      checkObject(input, "input");
      const delivery = checkDelivery(input);
      const spec = buildStepSpec(core, delivery, input);
      await beforeClaim(core, spec);
      countDelivery(core, delivery.jobType, delivery.redelivered);
      const sql = spec.tx ? sqlFor(spec.tx, true, opts.schema) : sqlFor(opts.db, false, opts.schema);
      return outcomeOf(await traceClaim(spec, () => acquire(core, sql, spec)));
    },
    async claimMany(inputs) {
      if (!Array.isArray(inputs))
        throw new InvalidEffectInputError("claimMany takes an array of claim inputs", { field: "inputs" });
      const answers = await claimMany(core, inputs);
      return answers.map((a) => (a.ok ? outcomeOf(a.acquired) : { kind: "error" as const, error: a.error }));
    },
    async completeMany(items) {
      if (!Array.isArray(items))
        throw new InvalidEffectInputError("completeMany takes an array of { claim, outcome }", { field: "items" });
      return completeMany(core, items);
    },
    async flush() {
      const [a, b, c] = await Promise.all([duplicates.flush(), rollups?.flush() ?? true, timeline?.flush() ?? true]);
      return a && b && c;
    },
    ready: () => retention.ready,
    async close() {
      core.closed = true;
      await retention.stop();
      rollups?.stop();
      duplicates.stop();
      timeline?.stop();
      await Promise.all([duplicates.flush(), rollups?.flush(), timeline?.flush()]);
    },
    registry,
    options: opts,
  };
}
