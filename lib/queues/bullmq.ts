import { DelayedError, type Job, UnrecoverableError, Worker, type WorkerOptions } from "bullmq";
import { Redis } from "ioredis";
import {
  type DeadLetterInfo,
  type Decision,
  type DeliveryInfo,
  type EffectsRunner,
  type IdempotentHandler,
  processDelivery,
} from "./deliveries";

/**
 * BullMQ adapter (Redis, REDIS_URL).
 *
 * Mapping onto BullMQ's verbs:
 * - ack (first run or duplicate): the processor returns; the job completes with
 *   `{ outcome, duplicate }` as its return value (the stored outcome on a duplicate).
 * - in flight elsewhere: `job.moveToDelayed(now + delay)` then DelayedError — BullMQ's own way to
 *   postpone a job without counting a failed attempt.
 * - dead-letter (key reuse, an invalid key): `onDeadLetter`, then UnrecoverableError(reason): the
 *   job goes straight to the failed set (BullMQ's dead-letter) with the reason, no retries.
 * - the handler's error: rethrown; BullMQ retries per the job's `attempts` / `backoff`. A worker
 *   that dies mid-job loses its lock; the stalled-job check moves the job back to wait and it is
 *   delivered again (stalledCounter + 1), up to maxStalledCount.
 */

export interface BullWorkOptions<T, R> {
  effects: EffectsRunner;
  handler: IdempotentHandler<T, R>;
  /** An ioredis client (see redisConnection) or connection options. */
  connection: Redis | { url: string };
  prefix?: string;
  concurrency?: number;
  inFlightDelayMs?: number;
  onDeadLetter?: (info: DeadLetterInfo<T>) => void | Promise<void>;
  onDecision?: (decision: Decision<R>, delivery: DeliveryInfo) => void;
  /** Any other BullMQ worker option (lockDuration, stalledInterval, maxStalledCount, …). */
  workerOptions?: Partial<WorkerOptions>;
}

/** An ioredis client configured as BullMQ requires (no per-request retry limit). */
export function redisConnection(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, lazyConnect: false });
}

export function deliveryOfBullJob(queue: string, job: Job): DeliveryInfo {
  // attemptsMade counts failed attempts; attemptsStarted also counts restarts after a stall or a
  // delay. Either above its first value means the broker delivered this message before.
  const attempt = Math.max(job.attemptsMade + 1, job.attemptsStarted || 1);
  return {
    queue,
    messageId: String(job.id),
    attempt,
    redelivered: attempt > 1 || job.stalledCounter > 0,
    publishedAt: new Date(job.timestamp),
  };
}

export function createIdempotentWorker<T, R>(queue: string, options: BullWorkOptions<T, R>): Worker<T, unknown> {
  const processor = async (job: Job<T>, token?: string): Promise<unknown> => {
    const delivery = deliveryOfBullJob(queue, job);
    const decision = await processDelivery(options.effects, options.handler, job.data, delivery, {
      inFlightDelayMs: options.inFlightDelayMs,
    });
    options.onDecision?.(decision, delivery);
    switch (decision.action) {
      case "ack":
        return { outcome: decision.result ?? null, duplicate: decision.duplicate };
      case "retry-later":
        await job.moveToDelayed(Date.now() + decision.delayMs, token);
        throw new DelayedError(decision.reason);
      case "dead-letter":
        await options.onDeadLetter?.({ queue, data: job.data, reason: decision.reason, code: decision.code, delivery });
        throw new UnrecoverableError(`dead-lettered (${decision.code}): ${decision.reason}`);
      case "fail":
        throw decision.error;
    }
  };
  return new Worker<T, unknown>(queue, processor, {
    connection: options.connection as never,
    prefix: options.prefix,
    concurrency: options.concurrency ?? 1,
    ...options.workerOptions,
  });
}
