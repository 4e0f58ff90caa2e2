import { randomBytes } from "node:crypto";
import type pg from "pg";
import type PgBoss from "pg-boss";
import type { OrderMessage } from "../demo/settings";
import type { BatchEffectsRunner, Decision, IdempotentHandler } from "../queues/deliveries";
import {
  SOAK_APP_PREFIX,
  SOAK_BOSS_SCHEMA,
  SOAK_QUEUE,
  type SoakBrokerEndpoint,
  type SoakBrokerName,
  type SoakWorkerConfig,
} from "./protocol";

/**
 * The soak's broker, on either side: the supervisor publishes and watches the queue drain, each
 * worker process consumes through that broker's adapter (lib/queues). pg-boss keeps its jobs in the
 * soak's own database; BullMQ, RabbitMQ and NATS JetStream are the machine's servers (REDIS_URL,
 * RABBITMQ_URL, NATS_URL), with a queue or stream named for this run and deleted after it (kept with --keep).
 */

/** pg-boss expiry of an active job; BullMQ's lock; the AckWait of the JetStream consumer: a killed worker's deliveries come back after this. */
export const SOAK_REDELIVERY_SECONDS = 8;

export interface SoakPublisher {
  /** Where the workers consume: handed to each worker process. */
  endpoint: SoakBrokerEndpoint;
  describe: string;
  /** One batch: every delivery carries its own id (pg-boss, BullMQ: the job id; RabbitMQ / NATS: the message id). */
  publish(jobs: { id: string; data: OrderMessage }[]): Promise<void>;
  /** Deliveries not yet finished (waiting, retrying, in flight), or -1 when the broker cannot say now. */
  open(): Promise<number>;
  /** After the workers stopped: published deliveries the broker completed and failed for good. */
  settled(published: number): Promise<{ completed: number; failed: number; note: string }>;
  /** Deletes the run's queue or stream (unless kept). */
  close(keep: boolean): Promise<void>;
}

export async function startSoakPublisher(
  broker: SoakBrokerName,
  options: { pool: pg.Pool; databaseUrl: string; redisUrl: string; rabbitUrl: string; natsUrl: string },
): Promise<SoakPublisher> {
  const runName = `${SOAK_APP_PREFIX}-${SOAK_QUEUE}-${process.pid}-${randomBytes(3).toString("hex")}`;
  if (broker === "pg-boss") {
    const { startBoss } = await import("../queues/pgboss");
    // The supervisor's pg-boss instance runs maintenance: it expires a killed worker's jobs.
    const boss: PgBoss = await startBoss({
      connectionString: options.databaseUrl,
      schema: SOAK_BOSS_SCHEMA,
      application_name: `${SOAK_APP_PREFIX}-boss`,
      max: 3,
      supervise: true,
      schedule: false,
      maintenanceIntervalSeconds: 1,
      onError: () => {},
    });
    await boss.createQueue(SOAK_QUEUE, {
      name: SOAK_QUEUE,
      retryLimit: 1000,
      retryDelay: 1,
      retryBackoff: false,
      expireInSeconds: SOAK_REDELIVERY_SECONDS,
    });
    await indexBrokerMaintenance(options.pool);
    return {
      endpoint: { broker },
      describe: `pg-boss 10 in the soak's database (schema ${SOAK_BOSS_SCHEMA})`,
      publish: async (jobs) => {
        await boss.insert(jobs.map((j) => ({ id: j.id, name: SOAK_QUEUE, data: j.data })));
      },
      async open() {
        const { rows } = await options.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ${SOAK_BOSS_SCHEMA}.job WHERE name = $1 AND state < 'completed'`,
          [SOAK_QUEUE],
        );
        return rows[0]?.n ?? -1;
      },
      async settled() {
        const { rows } = await options.pool.query<{ completed: number; failed: number }>(
          `SELECT count(*) FILTER (WHERE state = 'completed')::int AS completed,
                  count(*) FILTER (WHERE state = 'failed')::int AS failed
             FROM ${SOAK_BOSS_SCHEMA}.job WHERE name = $1 AND NOT (data ? '_onceboard')`,
          [SOAK_QUEUE],
        );
        return { completed: rows[0]?.completed ?? 0, failed: rows[0]?.failed ?? 0, note: "pg-boss's completed jobs" };
      },
      close: () => boss.stop({ graceful: false, wait: true, timeout: 2000 }).catch(() => {}),
    };
  }
  if (broker === "bullmq") {
    const { Queue } = await import("bullmq");
    const { redisConnection } = await import("../queues/bullmq");
    const connection = redisConnection(options.redisUrl);
    connection.on("error", () => {});
    const queue = runName;
    const bull = new Queue(queue, { connection });
    const waiting = async () => {
      const c = await bull.getJobCounts("wait", "prioritized", "delayed", "active", "waiting-children");
      return Object.values(c).reduce((a, b) => a + b, 0);
    };
    const info = await connection.info("server");
    return {
      endpoint: { broker, url: options.redisUrl, queue },
      describe: `BullMQ on Redis ${/redis_version:(\S+)/.exec(info)?.[1] ?? ""} at ${new URL(options.redisUrl).host} (queue ${queue})`,
      async publish(jobs) {
        await bull.addBulk(
          jobs.map((j) => ({
            name: SOAK_QUEUE,
            data: j.data,
            opts: {
              jobId: j.id,
              timestamp: Date.parse(j.data.publishedAt),
              attempts: 1000,
              backoff: { type: "fixed", delay: 1000 },
              // Completed jobs would hold a million-delivery run in Redis: settled() counts what is not done instead.
              removeOnComplete: true,
              removeOnFail: false,
            },
          })),
        );
      },
      open: waiting,
      async settled(published) {
        // The workers are gone: a killed worker's active job still counts here, as not completed.
        const left = await waiting();
        const failed = await bull.getFailedCount();
        return {
          completed: published - left - failed,
          failed,
          note: `published minus the ${left} not completed and the ${failed} failed`,
        };
      },
      async close(keep) {
        if (!keep) await bull.obliterate({ force: true }).catch(() => {});
        await bull.close().catch(() => {});
        connection.disconnect();
      },
    };
  }
  if (broker === "rabbitmq") {
    const amqp = (await import("amqplib")).default;
    const { assertTopology, deadLetterQueueOf, publishJson, retryQueueOf } = await import("../queues/rabbitmq");
    const connection = await amqp.connect(options.rabbitUrl);
    connection.on("error", () => {});
    const channel = await connection.createConfirmChannel();
    const queue = runName;
    await assertTopology(channel, queue, { maxAttempts: 1000 });
    const ready = async (q: string) => (await channel.checkQueue(q)).messageCount;
    return {
      endpoint: { broker, url: options.rabbitUrl, queue },
      describe: `RabbitMQ ${String(connection.connection.serverProperties.version)} at ${new URL(options.rabbitUrl).host} (quorum queue ${queue})`,
      async publish(jobs) {
        await Promise.all(
          jobs.map((j) =>
            publishJson(channel, queue, j.data, {
              messageId: j.id,
              timestamp: Math.floor(Date.parse(j.data.publishedAt) / 1000),
            }),
          ),
        );
      },
      // Ready messages only: RabbitMQ's AMQP side does not count unacked ones, so the supervisor
      // also waits for the workers to go quiet, and settled() counts what is left once they stopped.
      open: async () => (await ready(queue)) + (await ready(retryQueueOf(queue))),
      async settled(published) {
        // The workers are gone: every unacked delivery is back in the queue and counted here.
        const left = (await ready(queue)) + (await ready(retryQueueOf(queue)));
        const failed = await ready(deadLetterQueueOf(queue));
        return {
          completed: published - left - failed,
          failed,
          note: `published minus the ${left} still queued and the ${failed} dead-lettered`,
        };
      },
      async close(keep) {
        if (!keep) {
          for (const q of [queue, retryQueueOf(queue), deadLetterQueueOf(queue)]) await channel.deleteQueue(q).catch(() => {});
          await channel.deleteExchange(deadLetterQueueOf(queue)).catch(() => {});
        }
        await connection.close().catch(() => {});
      },
    };
  }
  const { assertJetStream, natsConnection } = await import("../queues/nats");
  const nc = await natsConnection(options.natsUrl, `${SOAK_APP_PREFIX}-supervisor`);
  const jsm = await nc.jetstreamManager();
  const js = nc.jetstream();
  const stream = runName.replace(/[^A-Za-z0-9_-]/g, "_");
  const subject = `${stream}.jobs`;
  const deadLetter = `${stream}.dead-letter`;
  await assertJetStream(jsm, {
    stream,
    subjects: [subject, deadLetter],
    durable: "workers",
    filterSubject: subject,
    ackWaitMs: SOAK_REDELIVERY_SECONDS * 1000,
    maxDeliver: 1000,
    maxAckPending: 10_000,
  });
  return {
    endpoint: { broker, url: options.natsUrl, queue: stream },
    describe: `NATS JetStream ${nc.info?.version ?? ""} at ${new URL(options.natsUrl).host} (stream ${stream})`,
    async publish(jobs) {
      // msgID: a batch re-sent after a failed publish is stored once (inside the duplicate window).
      await Promise.all(jobs.map((j) => js.publish(subject, JSON.stringify(j.data), { msgID: j.id })));
    },
    async open() {
      const info = await jsm.consumers.info(stream, "workers");
      return info.num_pending + info.num_ack_pending;
    },
    async settled(published) {
      const info = await jsm.consumers.info(stream, "workers");
      const left = info.num_pending + info.num_ack_pending;
      const s = await jsm.streams.info(stream, { subjects_filter: deadLetter });
      const failed = s.state.subjects?.[deadLetter] ?? 0;
      return {
        completed: published - left - failed,
        failed,
        note: `published minus the ${left} not acked and the ${failed} dead-lettered`,
      };
    },
    async close(keep) {
      if (!keep) await jsm.streams.delete(stream).catch(() => {});
      await nc.close().catch(() => {});
    },
  };
}

/** A worker process's consumer of the soak's broker. */
export interface SoakConsumer {
  inFlight(): number;
  stop(): Promise<void>;
}

export async function startSoakConsumer(
  config: SoakWorkerConfig,
  parts: {
    effects: BatchEffectsRunner;
    handler: IdempotentHandler<OrderMessage, unknown>;
    onDecision: (decision: Decision<unknown>) => void;
    name: string;
  },
): Promise<SoakConsumer> {
  const { endpoint } = config;
  if (endpoint.broker === "pg-boss") {
    const { consumeIdempotent, startBoss } = await import("../queues/pgboss");
    const boss: PgBoss = await startBoss({
      connectionString: config.url,
      schema: SOAK_BOSS_SCHEMA,
      application_name: `${parts.name}-boss`,
      max: 3,
      supervise: false,
      schedule: false,
      migrate: false,
      onError: () => {},
    });
    const consumer = await consumeIdempotent<OrderMessage, unknown>(boss, SOAK_QUEUE, {
      effects: parts.effects,
      handler: parts.handler,
      localConcurrency: config.concurrency,
      inFlightDelayMs: config.inFlightDelayMs,
      pollingIntervalMs: 100,
      ackIntervalMs: 25,
      messageId: (m) => m.msgId,
      publishedAt: (m) => new Date(m.publishedAt),
      // A dead letter fails the soak (counted by the worker); no second queue to create from every worker.
      deadLetterQueue: false,
      onDecision: parts.onDecision,
    });
    return {
      inFlight: () => consumer.inFlight,
      async stop() {
        await consumer.stop({ timeoutMs: 30_000 });
        await boss.stop({ graceful: false, wait: true, timeout: 2000 }).catch(() => {});
      },
    };
  }
  if (endpoint.broker === "bullmq") {
    const { createIdempotentWorker, redisConnection } = await import("../queues/bullmq");
    const connection = redisConnection(endpoint.url as string);
    connection.on("error", () => {});
    // Started minus decided: the adapter says nothing of a job postponed with DelayedError, every run ends in a decision.
    let started = 0;
    let decided = 0;
    const worker = createIdempotentWorker<OrderMessage, unknown>(endpoint.queue as string, {
      effects: parts.effects,
      handler: parts.handler,
      connection,
      concurrency: config.concurrency,
      inFlightDelayMs: config.inFlightDelayMs,
      onDecision: (decision) => {
        decided++;
        parts.onDecision(decision);
      },
      workerOptions: {
        // A SIGKILLed worker's jobs come back once their lock lapses (the other brokers' redelivery time).
        lockDuration: SOAK_REDELIVERY_SECONDS * 1000,
        stalledInterval: (SOAK_REDELIVERY_SECONDS * 1000) / 2,
        maxStalledCount: 1000,
      },
    });
    worker.on("active", () => {
      started++;
    });
    worker.on("error", () => {});
    await worker.waitUntilReady();
    return {
      inFlight: () => Math.max(0, started - decided),
      async stop() {
        await worker.close();
        connection.disconnect();
      },
    };
  }
  if (endpoint.broker === "rabbitmq") {
    const { consumeIdempotent } = await import("../queues/rabbitmq");
    const consumer = await consumeIdempotent<OrderMessage, unknown>({
      effects: parts.effects,
      handler: parts.handler,
      url: endpoint.url as string,
      queue: endpoint.queue as string,
      prefetch: config.concurrency,
      maxAttempts: 1000,
      backoffMs: () => 1000,
      inFlightDelayMs: config.inFlightDelayMs,
      onDecision: parts.onDecision,
    });
    return { inFlight: () => consumer.inFlight, stop: () => consumer.close() };
  }
  const { consumeIdempotent, natsConnection } = await import("../queues/nats");
  const connection = await natsConnection(endpoint.url as string, parts.name);
  const stream = endpoint.queue as string;
  const consumer = await consumeIdempotent<OrderMessage, unknown>({
    effects: parts.effects,
    handler: parts.handler,
    connection,
    stream,
    durable: "workers",
    queue: SOAK_QUEUE,
    concurrency: config.concurrency,
    backoffMs: () => 1000,
    inFlightDelayMs: config.inFlightDelayMs,
    deadLetterSubject: `${stream}.dead-letter`,
    onDecision: parts.onDecision,
  });
  return {
    inFlight: () => consumer.inFlight,
    async stop() {
      await consumer.close();
      await connection.close().catch(() => {});
    },
  };
}

/**
 * pg-boss 10's maintenance (every second here, so a killed worker's jobs expire quickly) runs
 * `expire` and `archive` with no index that fits either: two sequential scans of the whole job
 * table a second, ~100 ms each at 400,000 rows, which would eat a growing share of both cores
 * in a million-delivery run. These three give each scan an index (0.1–0.2 ms at 400,000 rows);
 * created on the partitioned table, they reach the soak queue's partition.
 */
async function indexBrokerMaintenance(pool: pg.Pool): Promise<void> {
  await pool.query(
    `CREATE INDEX IF NOT EXISTS soak_job_active_started ON ${SOAK_BOSS_SCHEMA}.job (started_on) WHERE state = 'active';
     CREATE INDEX IF NOT EXISTS soak_job_completed_on ON ${SOAK_BOSS_SCHEMA}.job (completed_on);
     CREATE INDEX IF NOT EXISTS soak_job_keep_until ON ${SOAK_BOSS_SCHEMA}.job (keep_until) WHERE state < 'active'`,
  );
}
