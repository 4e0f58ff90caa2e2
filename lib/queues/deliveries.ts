import type pg from "pg";
import {
  type BatchClaimInput,
  type Claim,
  classifyError,
  type Effects,
  type JobContext,
  type OnceManyAnswer,
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
  /** The publisher's span, from the message's W3C `traceparent` (traceContextOf): the library's spans link to it. */
  traceContext?: { traceId: string; spanId: string; traceFlags: number } | null;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * A W3C `traceparent` header (version 00) as the library's traceContext, or null for anything else:
 * a malformed header from a publisher must not refuse the delivery, only lose the link. The all-zero
 * ids are invalid by the spec.
 */
export function traceContextOf(header: unknown): { traceId: string; spanId: string; traceFlags: number } | null {
  const text = Buffer.isBuffer(header) ? header.toString("latin1") : header;
  const match = typeof text === "string" ? TRACEPARENT.exec(text.trim()) : null;
  if (!match || /^0+$/.test(match[1] as string) || /^0+$/.test(match[2] as string)) return null;
  return { traceId: match[1] as string, spanId: match[2] as string, traceFlags: Number.parseInt(match[3] as string, 16) };
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

/** What processBatch needs besides: the batched form of once. */
export type BatchEffectsRunner = EffectsRunner & Pick<Effects<pg.PoolClient>, "onceMany">;

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
      /** `<step>:<business fact>`, e.g. `settle:${data.invoiceId}` — never the message id. */
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

/** Dead-letter codes of the adapters that decode bodies and count attempts themselves (RabbitMQ, NATS). */
export const UNDECODABLE_MESSAGE = "UNDECODABLE_MESSAGE";
export const MAX_ATTEMPTS = "MAX_ATTEMPTS";

/** Their default delay before attempt n + 1 after attempt n failed: 1 s doubling, up to a minute. */
export const defaultRetryBackoffMs = (attempt: number): number => Math.min(1000 * 2 ** (attempt - 1), 60_000);

/** A body the adapter could not turn into the handler's message: no retry can decode it. */
export function undecodable<R>(error: unknown): Decision<R> {
  const e = error instanceof Error ? error : new Error(String(error));
  return { action: "dead-letter", reason: `the body does not decode: ${e.message}`, code: UNDECODABLE_MESSAGE, error: e };
}

/** A failure on the last attempt the broker allows becomes a dead-letter, so onDeadLetter sees it. */
export function withAttemptLimit<R>(decision: Decision<R>, attempt: number, maxAttempts: number): Decision<R> {
  if (decision.action !== "fail" || attempt < maxAttempts) return decision;
  const e = decision.error instanceof Error ? decision.error : new Error(String(decision.error));
  return {
    action: "dead-letter",
    reason: `attempt ${attempt} of ${maxAttempts} failed: ${e.message}`,
    code: MAX_ATTEMPTS,
    error: e,
  };
}

function deliveryMeta(handler: IdempotentHandler<unknown, unknown>, delivery: DeliveryInfo) {
  return {
    jobType: handler.jobType ?? delivery.queue,
    messageId: delivery.messageId,
    attempt: delivery.attempt,
    redelivered: delivery.redelivered,
    publishedAt: delivery.publishedAt ?? null,
    traceContext: delivery.traceContext ?? null,
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
 * A `once` handler's batch runs through effects.onceMany: the keys claimed together and the
 * outcomes stored together, each key answered and recorded exactly as effects.once would (a key
 * in flight elsewhere is not waited for: it is retried later). A `job` handler claims several keys
 * per delivery, one step at a time, so its deliveries run through processDelivery, concurrently.
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
  const decisions: Decision<R>[] = new Array(items.length);
  const inputs: BatchClaimInput[] = [];
  const batched: number[] = []; // the item index of each input
  for (const [index, { data, delivery }] of items.entries()) {
    try {
      inputs.push(onceInput(handler, data, delivery));
      batched.push(index);
    } catch (error) {
      decisions[index] = decide<R>(error, inFlightDelayMs);
    }
  }
  let answers: OnceManyAnswer<unknown>[];
  try {
    answers = await effects.onceMany(inputs, (claim, k) => {
      const item = items[batched[k] as number] as BatchItem<T>;
      return handler.run(item.data, claim, item.delivery);
    });
  } catch (error) {
    // The batch call itself failed (effects closed, a bad argument): every batched delivery's decision.
    for (const index of batched) decisions[index] = decide<R>(error, inFlightDelayMs);
    return decisions;
  }
  for (const [k, index] of batched.entries()) {
    const answer = answers[k];
    decisions[index] = !answer
      ? decide<R>(new Error(`effects.onceMany gave no answer for key ${inputs[k]?.key}`), inFlightDelayMs)
      : answer.ok
        ? { action: "ack", result: answer.result.outcome as R | undefined, duplicate: answer.result.duplicate }
        : decide<R>(answer.error, inFlightDelayMs);
  }
  return decisions;
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
