import PgBoss from "pg-boss";
import {
  type BatchEffectsRunner,
  type DeadLetterInfo,
  type Decision,
  type DeliveryInfo,
  type IdempotentHandler,
  processBatch,
  processDelivery,
} from "./core";

/**
 * pg-boss 10 adapter. pg-boss lives on the same PostgreSQL as the effects table, in its own
 * schema (default `pgboss`), so the embedded database needs nothing else.
 *
 * Mapping onto pg-boss's verbs:
 * - ack (first run or duplicate): the handler returns, pg-boss completes the job; the job's
 *   output is the effect's outcome (the stored one on a duplicate).
 * - in flight elsewhere: a copy is sent with `startAfter` = the delay, then this job completes.
 *   The copy carries the original message id and publish time, so it is still counted as a
 *   redelivery of the same message. It does not use up the job's retry budget.
 * - dead-letter (key reuse, an invalid key): the message and the reason go to the dead-letter
 *   queue (`<queue>.dead-letter` by default) and to `onDeadLetter`; this job completes.
 * - the handler's error: rethrown, so pg-boss fails the job and retries it per its retryLimit /
 *   retryDelay / retryBackoff. A job active longer than its expiry (a dead worker, a handler
 *   stuck past expireInSeconds) is failed and retried by pg-boss the same way.
 */

export type { DeadLetterInfo } from "./core";

/** Delivery metadata carried inside a re-enqueued copy; stripped before the handler sees the data. */
export const CARRY_FIELD = "_onceboard";

interface Carried {
  messageId: string;
  publishedAt: string;
  attempt: number;
}

export interface PgBossWorkOptions<T, R> {
  /** A createEffects() instance on a pg.Pool. */
  effects: BatchEffectsRunner;
  handler: IdempotentHandler<T, R>;
  /** Jobs processed at once in this process (one pg-boss poller each). Default 1. */
  concurrency?: number;
  /**
   * Jobs each poller fetches per poll (pg-boss `batchSize`). Default 1. pg-boss waits its polling
   * interval between two fetches of one poller, so a batch is what lets one poller go faster than
   * one job per interval. A `once` handler's batch is claimed with effects.claimMany (one round
   * trip and one commit per batch); each job is then decided on its own, exactly as a single
   * delivery (an in-flight key is re-sent later without waiting). The owned jobs run concurrently.
   * A job's failure fails that job only (it is failed by id, the rest are completed together), so
   * batching never fails a job for another's error. With batches, pg-boss stores no per-job output.
   */
  batchSize?: number;
  pollingIntervalSeconds?: number;
  /** Minimum delay before an in-flight duplicate is delivered again. Default 2 s. */
  inFlightDelayMs?: number;
  /** Queue for dead letters; false to only call onDeadLetter. Default `<queue>.dead-letter`. */
  deadLetterQueue?: string | false;
  onDeadLetter?: (info: DeadLetterInfo<T>) => void | Promise<void>;
  /** The message id to log and store; default the pg-boss job id. */
  messageId?: (data: T, job: PgBoss.JobWithMetadata<T>) => string;
  /** Default: the job's createdOn. */
  publishedAt?: (data: T, job: PgBoss.JobWithMetadata<T>) => Date;
  /** Observes every decision (logging, tests). */
  onDecision?: (decision: Decision<R>, delivery: DeliveryInfo) => void;
}

/** Starts a pg-boss instance on `connectionString` in `schema`, with errors routed to `onError`. */
export async function startBoss(options: PgBoss.ConstructorOptions & { onError?: (error: Error) => void }): Promise<PgBoss> {
  const { onError, ...config } = options;
  const boss = new PgBoss({ schema: "pgboss", ...config });
  boss.on("error", onError ?? (() => {}));
  await boss.start();
  return boss;
}

/** The delivery metadata pg-boss gives for a job (and any carried by a re-enqueued copy). */
export function deliveryOf<T>(
  queue: string,
  job: PgBoss.JobWithMetadata<T>,
  options: Pick<PgBossWorkOptions<T, unknown>, "messageId" | "publishedAt"> = {},
): { data: T; delivery: DeliveryInfo } {
  const raw = (job.data ?? {}) as T & { [CARRY_FIELD]?: Carried };
  const carried = raw[CARRY_FIELD];
  const data = carried ? (Object.fromEntries(Object.entries(raw).filter(([k]) => k !== CARRY_FIELD)) as T) : raw;
  // retryCount counts pg-boss's own retries (after a failure or an expiry); a carried copy is a
  // redelivery of an earlier message by construction.
  const attempt = (carried?.attempt ?? 0) + job.retryCount + 1;
  return {
    data,
    delivery: {
      queue,
      messageId: carried?.messageId ?? options.messageId?.(data, job) ?? job.id,
      attempt,
      redelivered: attempt > 1,
      publishedAt: carried ? new Date(carried.publishedAt) : (options.publishedAt?.(data, job) ?? job.createdOn),
    },
  };
}

/**
 * Registers an idempotent worker for `queue` (created if missing). Returns the pg-boss worker ids.
 */
export async function workIdempotent<T extends object, R>(
  boss: PgBoss,
  queue: string,
  options: PgBossWorkOptions<T, R>,
): Promise<string[]> {
  await boss.createQueue(queue);
  const deadLetterQueue = options.deadLetterQueue === undefined ? `${queue}.dead-letter` : options.deadLetterQueue;
  if (deadLetterQueue) await boss.createQueue(deadLetterQueue);

  /** Applies a decision with pg-boss's verbs; the job's output, or a throw for pg-boss to fail the job. */
  const apply = async (decision: Decision<R>, data: T, delivery: DeliveryInfo): Promise<unknown> => {
    options.onDecision?.(decision, delivery);
    switch (decision.action) {
      case "ack":
        return { outcome: decision.result ?? null, duplicate: decision.duplicate };
      case "retry-later": {
        const carried: Carried = {
          messageId: delivery.messageId,
          publishedAt: (delivery.publishedAt ?? new Date()).toISOString(),
          attempt: delivery.attempt,
        };
        await boss.send(queue, { ...data, [CARRY_FIELD]: carried }, { startAfter: Math.ceil(decision.delayMs / 1000) });
        return { inFlight: true, retryAfterMs: decision.delayMs };
      }
      case "dead-letter": {
        if (deadLetterQueue) {
          await boss.send(deadLetterQueue, {
            queue,
            data,
            reason: decision.reason,
            code: decision.code,
            messageId: delivery.messageId,
          });
        }
        await options.onDeadLetter?.({ queue, data, reason: decision.reason, code: decision.code, delivery });
        return { deadLettered: true, reason: decision.reason };
      }
      case "fail":
        throw decision.error;
    }
  };
  const processOptions = { inFlightDelayMs: options.inFlightDelayMs };

  /** One job: a single claim (which waits, bounded, for an in-flight duplicate). */
  const handleOne = async (job: PgBoss.JobWithMetadata<T>): Promise<unknown> => {
    const { data, delivery } = deliveryOf(queue, job, options);
    return apply(await processDelivery(options.effects, options.handler, data, delivery, processOptions), data, delivery);
  };

  /**
   * A batch: claimed in one round trip (processBatch), then each job's decision applied on its own.
   * pg-boss would fail every job of the batch for one thrown error, so each failure is failed by id
   * here (state retry/failed), and pg-boss then completes the jobs still active — the others — in
   * one statement.
   */
  const handleBatch = async (jobs: PgBoss.JobWithMetadata<T>[]): Promise<void> => {
    const items = jobs.map((job) => deliveryOf(queue, job, options));
    const decisions = await processBatch(options.effects, options.handler, items, processOptions);
    const settled = await Promise.allSettled(
      items.map(({ data, delivery }, k) => apply(decisions[k] as Decision<R>, data, delivery)),
    );
    for (const [k, s] of settled.entries()) {
      const job = jobs[k];
      if (s.status === "rejected" && job) await boss.fail(queue, job.id, failureOutput(s.reason));
    }
  };

  const batchSize = Math.max(1, Math.floor(options.batchSize ?? 1));
  const ids: string[] = [];
  for (let i = 0; i < (options.concurrency ?? 1); i++) {
    ids.push(
      await boss.work<T>(
        queue,
        { includeMetadata: true, batchSize, pollingIntervalSeconds: options.pollingIntervalSeconds ?? 1 },
        async (jobs) => {
          // One job: its error fails it through pg-boss, its result is the job's output.
          if (jobs.length <= 1) return jobs[0] ? handleOne(jobs[0]) : undefined;
          await handleBatch(jobs);
          return undefined;
        },
      ),
    );
  }
  return ids;
}

/** What pg-boss stores as a failed job's output (it does the same for an error thrown by a handler). */
function failureOutput(error: unknown): object {
  return error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : { value: String(error) };
}
