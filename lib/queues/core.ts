import type pg from "pg";
import {
  type BatchClaimInput,
  type BatchClaimOutcome,
  type Claim,
  classifyError,
  createMetrics,
  type Effects,
  type JobContext,
  OutcomeNotStorableError,
  OutcomeTooLargeError,
} from "../idempotency";

/**
 * The broker-independent half of every adapter: run one delivery through the worker library and
 * decide what the broker should do with it. Adapters (pg-boss, BullMQ, the generic one) only
 * translate a Decision into their broker's own verbs.
 */

/** What the adapter knows about one delivery; passed to the library and to the handler. */
export interface DeliveryInfo {
  /** Queue / job name. */
  queue: string;
  /** The broker's message id (a re-publish gets a new one; a redelivery keeps it). */
  messageId: string;
  /** 1 on the first delivery. */
  attempt: number;
  /** The broker says this message was delivered before (a retry, a stalled job, a nack). */
  redelivered: boolean;
  /** When the message was first published. */
  publishedAt?: Date;
}

/** What an adapter hands `onDeadLetter`: the message, why retrying cannot help, and its delivery. */
export interface DeadLetterInfo<T> {
  queue: string;
  data: T;
  reason: string;
  code: string;
  delivery: DeliveryInfo;
}

/** A createEffects() instance on a pg.Pool (transactional steps get a PoolClient). */
export type EffectsRunner = Pick<Effects<pg.PoolClient>, "once" | "job">;

/** What processBatch needs besides: the batched claim, and the registry and logger the library counts and logs to. */
export type BatchEffectsRunner = EffectsRunner &
  Pick<Effects<pg.PoolClient>, "claimMany" | "completeMany" | "registry" | "options">;

/**
 * An idempotent handler, in one of two shapes:
 * - `once`: the message is one effect under one key; a duplicate returns the stored outcome.
 * - `job`: several steps, each with its own key (job.external / job.transaction / job.atMostOnce).
 */
export type IdempotentHandler<T, R> =
  | {
      kind: "once";
      /** Defaults to the queue name. */
      jobType?: string;
      tenant: (data: T) => string;
      /** `<step>:<business fact>`, e.g. `capture:${data.orderId}` — never the message id. */
      key: (data: T) => string;
      /** What identifies the request, hashed to catch key reuse. Defaults to the whole message. */
      payload?: (data: T) => unknown;
      run: (data: T, claim: Claim, delivery: DeliveryInfo) => R | Promise<R>;
    }
  | {
      kind: "job";
      jobType?: string;
      tenant: (data: T) => string;
      run: (data: T, job: JobContext<pg.PoolClient>, delivery: DeliveryInfo) => R | Promise<R>;
    };

/** What the broker should do with a delivery. */
export type Decision<R> =
  /** Done: the effect ran now, or had run before (duplicate) and `result` is its stored outcome. */
  | { action: "ack"; result: R | undefined; duplicate: boolean }
  /** In flight elsewhere: deliver again after `delayMs`; not an error, not dropped. */
  | { action: "retry-later"; delayMs: number; reason: string }
  /** Retrying cannot help (key reuse, an invalid key): park it with the reason. */
  | { action: "dead-letter"; reason: string; code: string; error: Error }
  /**
   * Worth retrying: let the broker's normal retry policy have it. `fault` says whose: the handler's
   * own error, the database under the delivery (a connection cut, a restart: EffectsDatabaseError or
   * a connection-level error, never counted as the handler's), or the library (a lost lease).
   */
  | { action: "fail"; error: unknown; fault: "handler" | "database" | "library" };

export const DEFAULT_IN_FLIGHT_DELAY_MS = 2000;

function deliveryMeta(handler: IdempotentHandler<unknown, unknown>, delivery: DeliveryInfo) {
  return {
    jobType: handler.jobType ?? delivery.queue,
    messageId: delivery.messageId,
    attempt: delivery.attempt,
    redelivered: delivery.redelivered,
    publishedAt: delivery.publishedAt ?? null,
  };
}

/** The claim input of a `once` handler for one delivery (the handler's tenant / key / payload may throw). */
function onceInput<T>(handler: Extract<IdempotentHandler<T, unknown>, { kind: "once" }>, data: T, delivery: DeliveryInfo) {
  return {
    ...deliveryMeta(handler as IdempotentHandler<unknown, unknown>, delivery),
    tenant: handler.tenant(data),
    key: handler.key(data),
    payload: handler.payload ? handler.payload(data) : data,
  };
}

/** Runs one delivery through the library and maps the result onto a broker-neutral decision. */
export async function processDelivery<T, R>(
  effects: EffectsRunner,
  handler: IdempotentHandler<T, R>,
  data: T,
  delivery: DeliveryInfo,
  options: { inFlightDelayMs?: number } = {},
): Promise<Decision<R>> {
  const meta = deliveryMeta(handler as IdempotentHandler<unknown, unknown>, delivery);
  try {
    if (handler.kind === "once") {
      const r = await effects.once(onceInput(handler, data, delivery), (claim) => handler.run(data, claim, delivery));
      return { action: "ack", result: r.outcome as R | undefined, duplicate: r.duplicate };
    }
    const r = await effects.job({ ...meta, tenant: handler.tenant(data) }, (job) => handler.run(data, job, delivery));
    return { action: "ack", result: r.value as R, duplicate: r.duplicate };
  } catch (error) {
    return decide<R>(error, options.inFlightDelayMs ?? DEFAULT_IN_FLIGHT_DELAY_MS);
  }
}

/** One delivery of a batch: the message as the handler sees it, and its metadata. */
export interface BatchItem<T> {
  data: T;
  delivery: DeliveryInfo;
}

/**
 * Runs a batch of deliveries; one decision per delivery, in input order, never a rejection.
 *
 * A `once` handler's keys are claimed together with effects.claimMany: one round trip and one
 * commit for the whole batch, each key answered on its own exactly as a single claim would answer
 * it (owned, duplicate with the stored outcome, abandoned, key reuse, invalid), so one key's error
 * is that delivery's decision and never the others'. A key owned elsewhere (in flight) is not
 * waited for: it is retried later, as a single claim is once its wait runs out; a key that appears
 * twice in the batch is claimed again, singly, once its first copy has settled. The owned keys run
 * concurrently, each stored or released as effects.once would (runOwned). A `job` handler claims
 * several keys per delivery, one step at a time, so its deliveries run through processDelivery,
 * concurrently.
 */
export async function processBatch<T, R>(
  effects: BatchEffectsRunner,
  handler: IdempotentHandler<T, R>,
  items: readonly BatchItem<T>[],
  options: { inFlightDelayMs?: number } = {},
): Promise<Decision<R>[]> {
  const inFlightDelayMs = options.inFlightDelayMs ?? DEFAULT_IN_FLIGHT_DELAY_MS;
  if (handler.kind === "job" || items.length <= 1) {
    return Promise.all(items.map((item) => processDelivery(effects, handler, item.data, item.delivery, options)));
  }
  const decisions: (Decision<R> | undefined)[] = new Array(items.length);
  const inputs: BatchClaimInput[] = [];
  const claimed: number[] = []; // the item index of each input
  // A key twice in one batch: the later copies wait for the first to settle and are then claimed
  // singly (duplicate, or owned again if it failed), as a single claim would have waited for it.
  const firstOfKey = new Map<string, number>();
  const later: { index: number; after: number }[] = [];
  for (const [index, { data, delivery }] of items.entries()) {
    try {
      const input = onceInput(handler, data, delivery);
      const id = JSON.stringify([input.tenant, input.key]);
      const first = firstOfKey.get(id);
      if (first !== undefined) {
        later.push({ index, after: first });
        continue;
      }
      firstOfKey.set(id, index);
      inputs.push(input);
      claimed.push(index);
    } catch (error) {
      decisions[index] = decide<R>(error, inFlightDelayMs);
    }
  }
  const settled = new Map<number, Promise<unknown>>();
  let answers: BatchClaimOutcome[] | null = null;
  let batchError: unknown = null;
  try {
    answers = inputs.length > 0 ? await effects.claimMany(inputs) : [];
  } catch (error) {
    // The batch call itself failed (effects closed, a bad argument): every claimed delivery's decision.
    batchError = error;
  }
  const completer = completionBatch(effects, answers?.filter((a) => a.kind === "owned").length ?? 0);
  for (const [k, index] of claimed.entries()) {
    const item = items[index] as BatchItem<T>;
    const input = inputs[k] as BatchClaimInput;
    const decided = answers
      ? decideAnswer(effects, handler, item, input, answers[k], inFlightDelayMs, completer)
      : Promise.resolve(decide<R>(batchError, inFlightDelayMs));
    settled.set(
      index,
      decided.then((d) => {
        decisions[index] = d;
      }),
    );
  }
  for (const { index, after } of later) {
    const item = items[index] as BatchItem<T>;
    const previous = settled.get(after) ?? Promise.resolve();
    const next = previous.then(async () => {
      decisions[index] = await processDelivery(effects, handler, item.data, item.delivery, options);
    });
    settled.set(after, next); // the next copy of this key waits for this one
    settled.set(index, next);
  }
  await Promise.all(settled.values());
  return decisions as Decision<R>[];
}

/** One key's claimMany answer, as effects.once would have settled it (settleExisting / runOwnedClaim / storeOutcome). */
async function decideAnswer<T, R>(
  effects: BatchEffectsRunner,
  handler: Extract<IdempotentHandler<T, R>, { kind: "once" }>,
  { data, delivery }: BatchItem<T>,
  input: BatchClaimInput,
  answer: BatchClaimOutcome | undefined,
  inFlightDelayMs: number,
  completer: Completer,
): Promise<Decision<R>> {
  if (!answer) return decide<R>(new Error(`effects.claimMany gave no answer for key ${input.key}`), inFlightDelayMs);
  switch (answer.kind) {
    case "error":
      return decide<R>(answer.error, inFlightDelayMs);
    case "abandoned":
      // An at-most-once step whose owner died mid-way: not run again, no outcome (as once's "abandoned").
      return { action: "ack", result: undefined, duplicate: true };
    case "duplicate": {
      if (answer.status === "abandoned") return { action: "ack", result: undefined, duplicate: true };
      // A completed effect recorded without its outcome: the typed error its first run got.
      if (answer.missing?.kind === "too_large") {
        const bytes = Number.parseInt(answer.missing.detail, 10);
        return decide<R>(new OutcomeTooLargeError(input.key, bytes, effects.options.maxOutcomeBytes), inFlightDelayMs);
      }
      if (answer.missing?.kind === "not_storable") {
        return decide<R>(new OutcomeNotStorableError(input.key, answer.missing.detail, true), inFlightDelayMs);
      }
      return { action: "ack", result: (answer.outcome ?? null) as R, duplicate: true };
    }
    case "owned":
      return runOwned(effects, handler, data, delivery, answer.claim, inFlightDelayMs, completer);
  }
}

/**
 * This delivery owns the key: run the handler, then store its outcome with the claim, or release the
 * claim as failed (so the next delivery retries at once) and count the failure as effects.once does.
 */
async function runOwned<T, R>(
  effects: BatchEffectsRunner,
  handler: Extract<IdempotentHandler<T, R>, { kind: "once" }>,
  data: T,
  delivery: DeliveryInfo,
  claim: Claim,
  inFlightDelayMs: number,
  completer: Completer,
): Promise<Decision<R>> {
  const logger = effects.options.logger;
  const fields = {
    tenant: claim.tenant,
    key: claim.key,
    jobType: claim.jobType,
    messageId: delivery.messageId,
    attempt: delivery.attempt,
  };
  let value: R;
  try {
    value = await handler.run(data, claim, delivery);
  } catch (error) {
    const metrics = createMetrics(effects.registry);
    metrics.stepFailures.inc({ job_type: claim.jobType });
    const constraint = uniqueViolationConstraint(error);
    if (constraint !== null) {
      metrics.uncaughtViolations.inc({ job_type: claim.jobType, constraint });
      logger.error(
        { ...fields, result: "uncaught_unique_violation", effectAttempt: claim.attempt, constraint },
        "effect uncaught_unique_violation",
      );
    } else {
      logger.warn(
        {
          ...fields,
          result: "failed",
          effectAttempt: claim.attempt,
          err: error instanceof Error ? error.message : String(error),
        },
        "effect failed",
      );
    }
    completer.skip();
    await claim.fail(error).catch((failError: unknown) => logger.error({ err: failError }, "could not release a failed claim"));
    return decide<R>(error, inFlightDelayMs);
  }
  try {
    // Stored with the batch's other outcomes; one that cannot be kept is recorded with its marker
    // and its typed error thrown, as claim.complete() does.
    await completer.complete(claim, value);
  } catch (error) {
    return decide<R>(error, inFlightDelayMs);
  }
  if (logger.isLevelEnabled("info"))
    logger.info({ ...fields, result: "ran", effectAttempt: claim.attempt, how: claim.how }, "effect ran");
  // The same value every later duplicate gets: the outcome round-tripped through JSON, null for nothing.
  return { action: "ack", result: JSON.parse(JSON.stringify(value ?? null)) as R, duplicate: false };
}

interface Completer {
  /** Resolves once this claim's outcome is stored with the batch's others (rejects with its own error). */
  complete(claim: Claim, outcome: unknown): Promise<void>;
  /** This owned claim will not complete (its handler failed). */
  skip(): void;
}

/**
 * Stores the outcomes of a batch's owned claims together: one effects.completeMany (one round trip,
 * one commit) once every owned claim's handler has returned or failed. Each claim still gets its own
 * answer (stored, LeaseLostError, a marker's typed error).
 */
function completionBatch(effects: BatchEffectsRunner, owned: number): Completer {
  const waiting: { claim: Claim; outcome: unknown; resolve: () => void; reject: (error: unknown) => void }[] = [];
  let left = owned;
  const flushWhenAllRan = () => {
    if (left > 0 || waiting.length === 0) return;
    const batch = waiting.splice(0);
    effects.completeMany(batch.map(({ claim, outcome }) => ({ claim, outcome }))).then(
      (answers) => {
        for (const [k, w] of batch.entries()) {
          const answer = answers[k];
          if (answer?.ok) w.resolve();
          else w.reject(answer ? answer.error : new Error(`effects.completeMany gave no answer for key ${w.claim.key}`));
        }
      },
      (error: unknown) => {
        for (const w of batch) w.reject(error);
      },
    );
  };
  return {
    complete: (claim, outcome) =>
      new Promise<void>((resolve, reject) => {
        waiting.push({ claim, outcome, resolve, reject });
        left--;
        flushWhenAllRan();
      }),
    skip: () => {
      left--;
      flushWhenAllRan();
    },
  };
}

/**
 * A unique violation from the handler's own writes (pg SQLSTATE 23505, Prisma P2002): the violated
 * constraint's name ("unknown" when the driver does not say); otherwise null. Looks through `cause`.
 */
function uniqueViolationConstraint(error: unknown, depth = 0): string | null {
  if (!error || typeof error !== "object" || depth > 4) return null;
  const e = error as { code?: unknown; constraint?: unknown; meta?: { target?: unknown }; cause?: unknown };
  if (e.code === "23505") return typeof e.constraint === "string" ? e.constraint : "unknown";
  if (e.code === "P2002") {
    const target = e.meta?.target;
    return typeof target === "string" ? target : Array.isArray(target) ? target.join(",") : "unknown";
  }
  return uniqueViolationConstraint(e.cause, depth + 1);
}

/** The one place a library error becomes a broker action. Anything else is the handler's own failure. */
export function decide<R>(error: unknown, inFlightDelayMs = DEFAULT_IN_FLIGHT_DELAY_MS): Decision<R> {
  const kind = classifyError(error);
  if (kind.kind === "in_flight") {
    // Not before the other owner could plausibly finish, not so late that the message idles.
    const delayMs = Math.max(inFlightDelayMs, Math.min(kind.retryAfterMs, 60_000));
    return { action: "retry-later", delayMs, reason: (error as Error).message };
  }
  if (kind.kind === "key_reuse" || (kind.kind === "library" && kind.disposition === "dead-letter")) {
    const e = error as Error & { code: string };
    return { action: "dead-letter", reason: e.message, code: e.code, error: e };
  }
  // The handler's own error, a lost lease, a database hiccup: the broker's normal retry.
  return {
    action: "fail",
    error,
    fault: kind.kind === "database" ? "database" : kind.kind === "handler" ? "handler" : "library",
  };
}
