import { createHash } from "node:crypto";
import type pg from "pg";
import type PgBoss from "pg-boss";
import type { BatchEffectsRunner, DeadLetterInfo, IdempotentHandler } from "../queues/deliveries";
import { createDemoQueues } from "./handlers";
import { ALL_JOB_TYPES, DEMO_APP_PREFIX, DEMO_BOSS_SCHEMA, type DemoSettings, type OrderMessage } from "./settings";

/**
 * The demo's broker (`npm start -- --broker`, DEMO_BROKER): pg-boss in the demo's database (the
 * default), or BullMQ on the machine's Redis (REDIS_URL: one queue per job type), the machine's
 * RabbitMQ (RABBITMQ_URL: one quorum queue per job type, with its retry and dead-letter queues) or NATS JetStream (NATS_URL: one stream, one durable consumer per job
 * type). The producer, the workers' follow-up jobs and the supervisor's setup all go through it.
 */

/** Where Redis, RabbitMQ and NATS answer (lib/config.ts' REDIS_URL, RABBITMQ_URL and NATS_URL, handed down by the scripts). */
export interface DemoBrokerUrls {
  redis: string;
  rabbitmq: string;
  nats: string;
}

function urlOf(settings: DemoSettings, urls: DemoBrokerUrls | undefined): string {
  if (!urls)
    throw new Error(`the demo on ${settings.broker} needs its URL (REDIS_URL / RABBITMQ_URL / NATS_URL, passed as brokerUrls)`);
  if (settings.broker === "bullmq") return urls.redis;
  return settings.broker === "rabbitmq" ? urls.rabbitmq : urls.nats;
}

/**
 * The demo's names on a shared broker, per demo database (its host, port and name): two demos on
 * one Redis, RabbitMQ or NATS never consume each other's jobs, and a demo restarted on the same database
 * finds its queues with what was left in them.
 */
export function demoBrokerNames(databaseUrl: string) {
  const u = new URL(databaseUrl);
  const ns = createHash("sha256").update(`${u.hostname}:${u.port}${u.pathname}`).digest("hex").slice(0, 8);
  return {
    /** A BullMQ or RabbitMQ queue (RabbitMQ's retry and dead-letter queues follow from it). */
    queue: (jobType: string) => `${DEMO_APP_PREFIX}.${ns}.${jobType}`,
    /** The JetStream stream holding every job type, one subject each. */
    stream: `ONCEBOARD_DEMO_${ns}`,
    subject: (jobType: string) => `${DEMO_APP_PREFIX}.${ns}.${jobType}`,
    durable: (jobType: string) => jobType.replace(/[^A-Za-z0-9_-]/g, "_"),
  };
}

export interface DemoPublisher {
  /** One message; `delaySeconds`: delivered no sooner than that. */
  send(queue: string, message: OrderMessage, options?: { delaySeconds?: number }): Promise<void>;
  /** Copies of one message published together: two workers may take them at the same moment. */
  sendTogether(queue: string, messages: OrderMessage[]): Promise<void>;
  close(): Promise<void>;
}

/** Creates the demo's queues (or stream and consumers) once, before its processes start. */
export async function setupDemoBroker(settings: DemoSettings, databaseUrl: string, urls?: DemoBrokerUrls): Promise<void> {
  if (settings.broker === "pg-boss") {
    const { startBoss } = await import("../queues/pgboss");
    const boss = await startBoss({
      connectionString: databaseUrl,
      schema: DEMO_BOSS_SCHEMA,
      application_name: `${DEMO_APP_PREFIX}-setup`,
      max: 2,
      supervise: false,
      schedule: false,
    });
    try {
      await createDemoQueues(boss, settings);
    } finally {
      await boss.stop({ graceful: false, wait: true, timeout: 2000 }).catch(() => {});
    }
    return;
  }
  // A BullMQ queue is its Redis keys: the first job or worker creates it.
  if (settings.broker === "bullmq") return;
  if (settings.broker === "rabbitmq") {
    const amqp = (await import("amqplib")).default;
    const { assertTopology } = await import("../queues/rabbitmq");
    const connection = await amqp.connect(urlOf(settings, urls));
    try {
      const channel = await connection.createConfirmChannel();
      const names = demoBrokerNames(databaseUrl);
      for (const queue of ALL_JOB_TYPES) await assertTopology(channel, names.queue(queue), { maxAttempts: 100 });
    } finally {
      await connection.close().catch(() => {});
    }
    return;
  }
  const { assertJetStream, natsConnection } = await import("../queues/nats");
  const nc = await natsConnection(urlOf(settings, urls), `${DEMO_APP_PREFIX}-setup`);
  try {
    const jsm = await nc.jetstreamManager();
    const names = demoBrokerNames(databaseUrl);
    for (const queue of ALL_JOB_TYPES) {
      await assertJetStream(jsm, {
        stream: names.stream,
        subjects: ALL_JOB_TYPES.flatMap((q) => [names.subject(q), names.subject(`${q}.dead-letter`)]),
        durable: names.durable(queue),
        filterSubject: names.subject(queue),
        ackWaitMs: settings.expireInSeconds * 1000,
        maxDeliver: 100,
      });
    }
  } finally {
    await nc.close().catch(() => {});
  }
}

export async function openDemoPublisher(
  settings: DemoSettings,
  databaseUrl: string,
  name: string,
  urls?: DemoBrokerUrls,
): Promise<DemoPublisher> {
  if (settings.broker === "pg-boss") {
    const { startBoss } = await import("../queues/pgboss");
    const boss: PgBoss = await startBoss({
      connectionString: databaseUrl,
      schema: DEMO_BOSS_SCHEMA,
      application_name: `${name}-boss`,
      max: 3,
      supervise: false,
      schedule: false,
    });
    return pgBossPublisher(boss, () => boss.stop({ graceful: false, wait: true, timeout: 2000 }));
  }
  if (settings.broker === "bullmq") {
    const { Queue } = await import("bullmq");
    const { redisConnection } = await import("../queues/bullmq");
    const connection = redisConnection(urlOf(settings, urls));
    connection.on("error", () => {});
    const names = demoBrokerNames(databaseUrl);
    const queues = new Map<string, InstanceType<typeof Queue>>();
    const queueOf = (jobType: string) => {
      let q = queues.get(jobType);
      if (!q) {
        q = new Queue(names.queue(jobType), { connection });
        queues.set(jobType, q);
      }
      return q;
    };
    // No jobId: BullMQ would drop a second job with the same id, and the demo's duplicates are the point.
    const jobOptions = (delaySeconds?: number) => ({
      attempts: 100,
      backoff: { type: "fixed", delay: settings.retryDelaySeconds * 1000 },
      delay: delaySeconds ? Math.round(delaySeconds * 1000) : undefined,
      // Redis keeps the last ones for a look, not the demo's whole history.
      removeOnComplete: { count: 1000 },
      removeOnFail: { count: 1000 },
    });
    return {
      send: async (queue, message, options = {}) => {
        await queueOf(queue).add(queue, message, jobOptions(options.delaySeconds));
      },
      sendTogether: async (queue, messages) => {
        await queueOf(queue).addBulk(messages.map((data) => ({ name: queue, data, opts: jobOptions() })));
      },
      async close() {
        await Promise.allSettled([...queues.values()].map((q) => q.close()));
        connection.disconnect();
      },
    };
  }
  if (settings.broker === "rabbitmq") {
    const amqp = (await import("amqplib")).default;
    const { publishJson } = await import("../queues/rabbitmq");
    const connection = await amqp.connect(urlOf(settings, urls));
    connection.on("error", () => {});
    const channel = await connection.createConfirmChannel();
    // The logical message id travels as AMQP's message_id: a broker duplicate keeps it, a re-publish gets a new one.
    const names = demoBrokerNames(databaseUrl);
    const send = (queue: string, m: OrderMessage, delaySeconds?: number) =>
      publishJson(channel, names.queue(queue), m, {
        messageId: m.msgId,
        delayMs: delaySeconds ? delaySeconds * 1000 : undefined,
      });
    return {
      send: (queue, message, options = {}) => send(queue, message, options.delaySeconds),
      sendTogether: async (queue, messages) => {
        await Promise.all(messages.map((m) => send(queue, m)));
      },
      close: () => connection.close().catch(() => {}),
    };
  }
  const { natsConnection } = await import("../queues/nats");
  const nc = await natsConnection(urlOf(settings, urls), name);
  const js = nc.jetstream();
  // No Nats-Msg-Id: the stream would drop the demo's own duplicates (same id within its window),
  // which are the point. JetStream 2.9 has no delayed publish: a delayed message waits here.
  const waiting = new Map<NodeJS.Timeout, () => Promise<unknown>>();
  const names = demoBrokerNames(databaseUrl);
  const publish = (queue: string, m: OrderMessage) => js.publish(names.subject(queue), JSON.stringify(m));
  return {
    async send(queue, message, options = {}) {
      const delayMs = (options.delaySeconds ?? 0) * 1000;
      if (delayMs <= 0) {
        await publish(queue, message);
        return;
      }
      const fire = () => publish(queue, message).catch(() => {});
      const timer = setTimeout(() => {
        waiting.delete(timer);
        void fire();
      }, delayMs);
      waiting.set(timer, fire);
    },
    sendTogether: async (queue, messages) => {
      await Promise.all(messages.map((m) => publish(queue, m)));
    },
    async close() {
      // What still waits is published now rather than lost with the process.
      const due = [...waiting];
      waiting.clear();
      for (const [timer] of due) clearTimeout(timer);
      await Promise.allSettled(due.map(([, fire]) => fire()));
      await nc.drain().catch(() => {});
    },
  };
}

function pgBossPublisher(boss: PgBoss, stop: () => Promise<unknown>): DemoPublisher {
  return {
    send: async (queue, message, options = {}) => {
      await boss.send(queue, message, options.delaySeconds ? { startAfter: Math.round(options.delaySeconds) } : {});
    },
    sendTogether: async (queue, messages) => {
      await boss.insert(messages.map((data) => ({ name: queue, data })));
    },
    close: async () => {
      await stop().catch(() => {});
    },
  };
}

/** A worker process's consumers of every demo queue, and its publisher of follow-up jobs. */
export interface DemoConsumers {
  publisher: DemoPublisher;
  stop(): Promise<void>;
}

export async function startDemoConsumers(options: {
  settings: DemoSettings;
  databaseUrl: string;
  brokerUrls?: DemoBrokerUrls;
  name: string;
  pool: pg.Pool;
  effects: BatchEffectsRunner;
  handlers: (publisher: DemoPublisher) => Record<string, IdempotentHandler<OrderMessage, unknown>>;
  onError: (error: Error) => void;
}): Promise<DemoConsumers> {
  const { settings, pool } = options;
  const onDeadLetter = async ({ queue, data, reason }: DeadLetterInfo<OrderMessage | undefined>) => {
    await pool.query("INSERT INTO demo_dead_letters (queue, data, reason) VALUES ($1, $2, $3)", [queue, data ?? {}, reason]);
  };
  if (settings.broker === "pg-boss") {
    const { startBoss, workIdempotent } = await import("../queues/pgboss");
    const boss = await startBoss({
      connectionString: options.databaseUrl,
      schema: DEMO_BOSS_SCHEMA,
      application_name: `${options.name}-boss`,
      max: 4,
      maintenanceIntervalSeconds: settings.maintenanceIntervalSeconds,
      monitorStateIntervalSeconds: 60,
      onError: options.onError,
    });
    await createDemoQueues(boss, settings);
    const publisher = pgBossPublisher(boss, async () => {});
    for (const [queue, handler] of Object.entries(options.handlers(publisher))) {
      await workIdempotent<OrderMessage, unknown>(boss, queue, {
        effects: options.effects,
        handler,
        concurrency: settings.pollers,
        pollingIntervalSeconds: 1,
        // The logical message id travels in the message: a broker duplicate keeps it, a re-publish
        // gets a new one. pg-boss gives each copy its own job id.
        messageId: (data) => data.msgId,
        publishedAt: (data) => new Date(data.publishedAt),
        onDeadLetter,
      });
    }
    return { publisher, stop: () => boss.stop({ graceful: true, wait: true, timeout: 5000 }).catch(() => {}) };
  }
  const publisher = await openDemoPublisher(settings, options.databaseUrl, options.name, options.brokerUrls);
  const names = demoBrokerNames(options.databaseUrl);
  // The job type stays the demo's (the console and demo:verify read it), whatever the broker's name.
  const handlers = Object.entries(options.handlers(publisher)).map(
    ([queue, handler]) => [queue, { ...handler, jobType: handler.jobType ?? queue }] as const,
  );
  const stops: (() => Promise<void>)[] = [];
  if (settings.broker === "bullmq") {
    const { createIdempotentWorker, redisConnection } = await import("../queues/bullmq");
    const connection = redisConnection(urlOf(settings, options.brokerUrls));
    connection.on("error", () => {});
    for (const [queue, handler] of handlers) {
      const worker = createIdempotentWorker<OrderMessage, unknown>(names.queue(queue), {
        connection,
        effects: options.effects,
        handler,
        concurrency: settings.pollers,
        onDeadLetter: (info) => onDeadLetter({ ...info, queue }),
        workerOptions: {
          // A crashed worker's jobs come back once their lock lapses, as pg-boss's expire.
          lockDuration: settings.expireInSeconds * 1000,
          maxStalledCount: 100,
        },
      });
      worker.on("error", options.onError);
      await worker.waitUntilReady();
      stops.push(() => worker.close());
    }
    stops.push(async () => {
      connection.disconnect();
    });
  } else if (settings.broker === "rabbitmq") {
    const { consumeIdempotent } = await import("../queues/rabbitmq");
    for (const [queue, handler] of handlers) {
      const consumer = await consumeIdempotent<OrderMessage, unknown>({
        url: urlOf(settings, options.brokerUrls),
        queue: names.queue(queue),
        effects: options.effects,
        handler,
        prefetch: settings.pollers,
        maxAttempts: 100,
        backoffMs: () => settings.retryDelaySeconds * 1000,
        onDeadLetter: (info) => onDeadLetter({ ...info, queue }),
      });
      stops.push(() => consumer.close());
    }
  } else {
    const { consumeIdempotent, natsConnection } = await import("../queues/nats");
    const connection = await natsConnection(urlOf(settings, options.brokerUrls), options.name);
    for (const [queue, handler] of handlers) {
      const consumer = await consumeIdempotent<OrderMessage, unknown>({
        connection,
        stream: names.stream,
        durable: names.durable(queue),
        queue,
        effects: options.effects,
        handler,
        concurrency: settings.pollers,
        backoffMs: () => settings.retryDelaySeconds * 1000,
        deadLetterSubject: names.subject(`${queue}.dead-letter`),
        onDeadLetter,
      });
      stops.push(() => consumer.close());
    }
    stops.push(() => connection.close().catch(() => {}));
  }
  return {
    publisher,
    async stop() {
      for (const stop of stops) await stop();
      await publisher.close();
    },
  };
}

/**
 * Deletes the demo's queues on Redis (BullMQ) and RabbitMQ and its stream on NATS for this
 * database, where each answers (demo:reset, tests): the jobs in them name orders the reset removed. Says what it removed.
 */
export async function removeDemoBrokerQueues(databaseUrl: string, urls: DemoBrokerUrls): Promise<string[]> {
  const names = demoBrokerNames(databaseUrl);
  const removed: string[] = [];
  try {
    const { Queue } = await import("bullmq");
    const { Redis } = await import("ioredis");
    // No retries: a Redis that does not answer means nothing of the demo's is on it.
    const connection = new Redis(urls.redis, {
      maxRetriesPerRequest: null,
      connectTimeout: 2000,
      retryStrategy: () => null,
      lazyConnect: true,
    });
    connection.on("error", () => {});
    await connection.connect();
    try {
      for (const jobType of ALL_JOB_TYPES) {
        const queue = new Queue(names.queue(jobType), { connection });
        // meta: written by a worker or a first job; id: the counter of the first job's id; events: its stream.
        const keys = ["meta", "id", "events"].map((k) => `${queue.qualifiedName}:${k}`);
        if ((await connection.exists(...keys)) > 0) {
          await queue.obliterate({ force: true });
          removed.push(`BullMQ queue ${names.queue(jobType)}`);
        }
        await queue.close();
      }
    } finally {
      connection.disconnect();
    }
  } catch {
    // No Redis here.
  }
  try {
    const amqp = (await import("amqplib")).default;
    const { deadLetterQueueOf, retryQueueOf } = await import("../queues/rabbitmq");
    const connection = await amqp.connect(urls.rabbitmq, { timeout: 2000 });
    connection.on("error", () => {});
    try {
      for (const jobType of ALL_JOB_TYPES) {
        const queue = names.queue(jobType);
        // A channel per queue: deleting what is not there is fine, but a failed check closes the channel.
        const channel = await connection.createChannel();
        channel.on("error", () => {});
        const exists = await channel.checkQueue(queue).then(
          () => true,
          () => false,
        );
        await channel.close().catch(() => {});
        if (exists) {
          const ch = await connection.createChannel();
          for (const q of [queue, retryQueueOf(queue), deadLetterQueueOf(queue)]) await ch.deleteQueue(q);
          await ch.deleteExchange(deadLetterQueueOf(queue));
          await ch.close();
          removed.push(`RabbitMQ queue ${queue}`);
        }
      }
    } finally {
      await connection.close().catch(() => {});
    }
  } catch {
    // No RabbitMQ here: nothing of the demo's on it.
  }
  try {
    const { connect } = await import("nats");
    const nc = await connect({ servers: urls.nats, timeout: 2000, maxReconnectAttempts: 0 });
    try {
      const jsm = await nc.jetstreamManager();
      if (await jsm.streams.delete(names.stream).catch(() => false)) removed.push(`NATS stream ${names.stream}`);
    } finally {
      await nc.close().catch(() => {});
    }
  } catch {
    // No NATS here.
  }
  return removed;
}
