import PgBoss from "pg-boss";
import { type Decision, processBatch, processDelivery } from "./deliveries";
import { deliveryOf, failureOutput, type PgBossWorkOptions, prepareQueue } from "./pgboss-queue";

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

export type { DeadLetterInfo } from "./deliveries";
export { consumeIdempotent, type IdempotentConsumer, type PgBossConsumeOptions } from "./pgboss-consume";
export { CARRY_FIELD, deliveryOf, type PgBossWorkOptions } from "./pgboss-queue";

/** Starts a pg-boss instance on `connectionString` in `schema`, with errors routed to `onError`. */
export async function startBoss(options: PgBoss.ConstructorOptions & { onError?: (error: Error) => void }): Promise<PgBoss> {
  const { onError, ...config } = options;
  const boss = new PgBoss({ schema: "pgboss", ...config });
  boss.on("error", onError ?? (() => {}));
  await boss.start();
  return boss;
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
