import type PgBoss from "pg-boss";
import { type Decision, type DeliveryInfo, decide, processBatch, processDelivery } from "./deliveries";
import { batchedCompletions } from "./pgboss-acks";
import { deliveryOf, failureOutput, type PgBossWorkOptions, prepareQueue } from "./pgboss-queue";

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
