import type PgBoss from "pg-boss";
import type { BatchEffectsRunner, DeadLetterInfo, Decision, DeliveryInfo, IdempotentHandler } from "./deliveries";

/**
 * What every pg-boss entry point shares: the delivery a job carries, the options, and how a
 * decision is applied to a job (its queue and dead-letter queue made first).
 */

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
   * one job per interval. A `once` handler's batch runs through effects.onceMany (one round
   * trip and one commit to claim, one to store); each job is then decided on its own, exactly as a single
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

/** Creates `queue` and its dead-letter queue (if missing) and returns how a decision is applied to a job. */
export async function prepareQueue<T extends object, R>(boss: PgBoss, queue: string, options: PgBossWorkOptions<T, R>) {
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
  return apply;
}

/** What pg-boss stores as a failed job's output (it does the same for an error thrown by a handler). */
export function failureOutput(error: unknown): object {
  return error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : { value: String(error) };
}
