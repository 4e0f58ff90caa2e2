import PgBoss from "pg-boss";
import {
  type BatchEffectsRunner,
  type DeadLetterInfo,
  type Decision,
  type DeliveryInfo,
  decide,
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

/** Creates `queue` and its dead-letter queue (if missing) and returns how a decision is applied to a job. */
async function prepareQueue<T extends object, R>(boss: PgBoss, queue: string, options: PgBossWorkOptions<T, R>) {
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

/**
 * Registers an idempotent worker for `queue` (created if missing). Returns the pg-boss worker ids.
 */
export async function workIdempotent<T extends object, R>(
  boss: PgBoss,
  queue: string,
  options: PgBossWorkOptions<T, R>,
): Promise<string[]> {
  const apply = await prepareQueue(boss, queue, options);
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

export interface PgBossConsumeOptions<T, R>
  extends Omit<PgBossWorkOptions<T, R>, "concurrency" | "batchSize" | "pollingIntervalSeconds"> {
  /**
   * Deliveries in flight at once in this process, across fetches: a fetch takes up to the free
   * slots as soon as a quarter of them are free, while the rest still run (what pg-boss 11 calls
   * `localConcurrency`; pg-boss 10's `work()` finishes a whole batch before its next fetch).
   */
  localConcurrency: number;
  /** Most jobs one fetch takes. Default `localConcurrency`. */
  batchSize?: number;
  /** Wait after a fetch that found nothing (pg-boss's fetch also finds nothing while the database is away). Default 1000 ms. */
  pollingIntervalMs?: number;
  /**
   * How long a finished job waits for others to be completed with it in one statement. Default
   * 25 ms. A process that dies in this window leaves its jobs active: pg-boss expires and retries
   * them, and the redelivery is suppressed as a duplicate. pg-boss stores no per-job output.
   */
  ackIntervalMs?: number;
  /** Errors the consumer could not hand back to a job: a failed completion or a failed `fail`. */
  onError?: (error: unknown) => void;
}

/** A running consumeIdempotent loop. */
export interface IdempotentConsumer {
  /** Deliveries fetched and not yet settled (decided, and acked or failed): what dies with the process. */
  readonly inFlight: number;
  /**
   * Stops fetching, waits up to `timeoutMs` (default 30 s) for the deliveries in flight, and
   * completes the finished ones. Deliveries still running after that stay active and expire.
   */
  stop(options?: { timeoutMs?: number }): Promise<void>;
}

/**
 * Consumes `queue` (created if missing) with up to `localConcurrency` deliveries in flight across
 * fetches, for a throughput-bound consumer: workIdempotent's pollers each work one fetched batch to
 * its end and then wait out their polling interval. Jobs are decided exactly as workIdempotent
 * decides them (a `once` handler's fetched batch run through effects.onceMany,
 * a `job` handler's deliveries each on its own), each slot is freed as its
 * job settles, and the jobs acked (completed, re-sent as an in-flight copy, dead-lettered) are
 * completed together, one statement per `ackIntervalMs`. A failed job is failed by id at once, so
 * pg-boss retries it per the queue's policy.
 */
export async function consumeIdempotent<T extends object, R>(
  boss: PgBoss,
  queue: string,
  options: PgBossConsumeOptions<T, R>,
): Promise<IdempotentConsumer> {
  const apply = await prepareQueue(boss, queue, options);
  const processOptions = { inFlightDelayMs: options.inFlightDelayMs };
  const limit = Math.max(1, Math.floor(options.localConcurrency));
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? limit));
  // Refilling at every free slot would cost a fetch per job; a quarter keeps the slots nearly full.
  const refillAt = Math.max(1, Math.floor(limit / 4));
  const pollingIntervalMs = options.pollingIntervalMs ?? 1000;
  const reportError = (error: unknown) => options.onError?.(error);
  const acks = batchedCompletions(boss, queue, options.ackIntervalMs ?? 25, reportError);

  let inFlight = 0;
  let stopping = false;
  // Waits for room end early when a delivery settles or stop() is called.
  const waiters = new Set<() => void>();
  const wakeUp = () => {
    for (const done of waiters) done();
  };
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
    });

  const decideEach = (items: { data: T; delivery: DeliveryInfo }[]): Promise<Decision<R>>[] => {
    if (options.handler.kind === "once" && items.length > 1) {
      const batch = processBatch(options.effects, options.handler, items, processOptions);
      return items.map((_, k) => batch.then((decisions) => decisions[k] as Decision<R>));
    }
    return items.map(({ data, delivery }) => processDelivery(options.effects, options.handler, data, delivery, processOptions));
  };

  const settle = async (
    job: PgBoss.JobWithMetadata<T>,
    item: { data: T; delivery: DeliveryInfo },
    decided: Promise<Decision<R>>,
  ) => {
    try {
      let ok = false;
      let failure: unknown;
      try {
        await apply(await decided, item.data, item.delivery);
        ok = true;
      } catch (error) {
        failure = error;
      }
      if (ok) acks.add(job.id);
      // Not told (the database is away): the job expires and comes back.
      else await boss.fail(queue, job.id, failureOutput(failure)).catch(reportError);
    } finally {
      inFlight--;
      wakeUp();
    }
  };

  const start = (jobs: PgBoss.JobWithMetadata<T>[]) => {
    inFlight += jobs.length;
    const taken: { job: PgBoss.JobWithMetadata<T>; item: { data: T; delivery: DeliveryInfo } }[] = [];
    for (const job of jobs) {
      try {
        taken.push({ job, item: deliveryOf(queue, job, options) });
      } catch (error) {
        // The messageId / publishedAt option threw for this job: its failure, not the others'.
        void settle(
          job,
          { data: job.data, delivery: { queue, messageId: job.id, attempt: 1, redelivered: false } },
          Promise.resolve(decide<R>(error)),
        );
      }
    }
    const decisions = decideEach(taken.map((t) => t.item));
    for (const [k, { job, item }] of taken.entries()) void settle(job, item, decisions[k] as Promise<Decision<R>>);
  };

  const loop = (async () => {
    while (!stopping) {
      const free = limit - inFlight;
      if (free < refillAt) {
        await pause(pollingIntervalMs);
        continue;
      }
      let jobs: PgBoss.JobWithMetadata<T>[] = [];
      try {
        jobs = await boss.fetch<T>(queue, { batchSize: Math.min(free, batchSize), includeMetadata: true });
      } catch (error) {
        reportError(error);
      }
      if (jobs.length > 0) start(jobs);
      else if (!stopping) await pause(pollingIntervalMs);
    }
  })();

  return {
    get inFlight() {
      return inFlight;
    },
    async stop({ timeoutMs = 30_000 } = {}) {
      stopping = true;
      wakeUp();
      await loop;
      const deadline = Date.now() + timeoutMs;
      while (inFlight > 0 && Date.now() < deadline) await pause(Math.min(1000, Math.max(1, deadline - Date.now())));
      await acks.close(deadline);
    },
  };
}

/**
 * Completes acked jobs together: one `complete` statement for every job acked within `intervalMs`
 * of the first. A completion that fails (the database is away) is tried again with the next ones,
 * backing off; the jobs stay active meanwhile, and one that expires first is redelivered and
 * suppressed as a duplicate.
 */
function batchedCompletions(boss: PgBoss, queue: string, intervalMs: number, reportError: (error: unknown) => void) {
  let waiting: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> | undefined;
  let failures = 0;
  let closed = false;
  const flush = async () => {
    if (waiting.length === 0) return;
    const ids = waiting;
    waiting = [];
    try {
      await boss.complete(queue, ids);
      failures = 0;
    } catch (error) {
      waiting = ids.concat(waiting);
      failures++;
      reportError(error);
    }
  };
  const schedule = () => {
    if (timer || flushing || closed || waiting.length === 0) return;
    const delay = failures === 0 ? intervalMs : Math.min(250 * failures, 5000);
    timer = setTimeout(() => {
      timer = undefined;
      flushing = flush().finally(() => {
        flushing = undefined;
        schedule();
      });
    }, delay);
  };
  return {
    add(id: string) {
      waiting.push(id);
      schedule();
    },
    /** Flushes what is waiting, retrying until `deadline`; later acks are dropped (their jobs expire). */
    async close(deadline: number) {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      await flushing;
      for (;;) {
        await flush();
        if (waiting.length === 0 || Date.now() >= deadline) return;
        await new Promise((r) => setTimeout(r, Math.min(250 * failures, 5000, Math.max(1, deadline - Date.now()))));
      }
    },
  };
}

/** What pg-boss stores as a failed job's output (it does the same for an error thrown by a handler). */
function failureOutput(error: unknown): object {
  return error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : { value: String(error) };
}
