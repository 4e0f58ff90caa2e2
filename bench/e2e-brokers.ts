import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import type { EffectsRunner, IdempotentHandler } from "../lib/queues/deliveries";

/**
 * bench:e2e's RabbitMQ and NATS JetStream phases: the same jobs (one narrow INSERT each) through
 * the machine's broker, consumed raw (the write, then the ack) or through the broker's adapter
 * (lib/queues/rabbitmq.ts, lib/queues/nats.ts) with the same handler as the pg-boss phases. Both
 * sides hold the same number of deliveries at once (`inFlight`: RabbitMQ's prefetch, the JetStream
 * consumer's concurrency). A phase publishes its jobs to a queue or stream of its own first, then
 * is timed from the consumer's start to its last ack.
 */

export type E2eBroker = "rabbitmq" | "nats";

export interface BrokerPhaseOptions {
  pool: pg.Pool;
  effects: EffectsRunner;
  handler: IdempotentHandler<{ id: string }, void>;
  write: { name: string; text: string };
  jobs: number;
  inFlight: number;
  url: string;
}

const unique = (broker: E2eBroker, side: string) =>
  `bench-e2e-${broker}-${side}-${process.pid}-${randomBytes(3).toString("hex")}`;

async function until(what: string, done: () => boolean, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`bench:e2e: timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Jobs per second of one phase on `broker`, with or without the library. */
export async function brokerPhase(broker: E2eBroker, side: "with" | "without", o: BrokerPhaseOptions): Promise<number> {
  return broker === "rabbitmq" ? rabbitPhase(side, o) : natsPhase(side, o);
}

async function rabbitPhase(side: "with" | "without", o: BrokerPhaseOptions): Promise<number> {
  const amqp = (await import("amqplib")).default;
  const { assertTopology, consumeIdempotent, deadLetterQueueOf, publishJson, retryQueueOf } = await import(
    "../lib/queues/rabbitmq"
  );
  const queue = unique("rabbitmq", side);
  const connection = await amqp.connect(o.url);
  const channel = await connection.createConfirmChannel();
  try {
    await assertTopology(channel, queue);
    for (let i = 0; i < o.jobs; i += 500) {
      const n = Math.min(500, o.jobs - i);
      await Promise.all(Array.from({ length: n }, (_, k) => publishJson(channel, queue, { id: `${queue}:${i + k}` })));
    }
    let acked = 0;
    const started = performance.now();
    if (side === "without") {
      const consumerChannel = await connection.createChannel();
      await consumerChannel.prefetch(o.inFlight);
      const { consumerTag } = await consumerChannel.consume(queue, async (msg) => {
        if (!msg) return;
        const data = JSON.parse(msg.content.toString()) as { id: string };
        await o.pool.query({ ...o.write, values: [data.id] });
        consumerChannel.ack(msg);
        acked++;
      });
      await until("the raw consumer's acks", () => acked >= o.jobs);
      const seconds = (performance.now() - started) / 1000;
      await consumerChannel.cancel(consumerTag);
      await consumerChannel.close();
      return o.jobs / seconds;
    }
    const consumer = await consumeIdempotent<{ id: string }, void>({
      url: o.url,
      queue,
      effects: o.effects,
      handler: o.handler,
      prefetch: o.inFlight,
      onDecision: (d) => {
        if (d.action === "ack") acked++;
        else throw new Error(`bench:e2e: a delivery was not acked (${d.action})`);
      },
    });
    await until("the adapter's acks", () => acked >= o.jobs);
    const seconds = (performance.now() - started) / 1000;
    await consumer.close();
    return o.jobs / seconds;
  } finally {
    for (const q of [queue, retryQueueOf(queue), deadLetterQueueOf(queue)]) await channel.deleteQueue(q).catch(() => {});
    await channel.deleteExchange(deadLetterQueueOf(queue)).catch(() => {});
    await connection.close().catch(() => {});
  }
}

async function natsPhase(side: "with" | "without", o: BrokerPhaseOptions): Promise<number> {
  const { assertJetStream, consumeIdempotent, natsConnection } = await import("../lib/queues/nats");
  const stream = unique("nats", side).replace(/[^A-Za-z0-9_-]/g, "_");
  const subject = `${stream}.jobs`;
  const nc = await natsConnection(o.url);
  const jsm = await nc.jetstreamManager();
  try {
    await assertJetStream(jsm, { stream, subjects: [subject], durable: "bench", maxAckPending: 10_000 });
    const js = nc.jetstream();
    for (let i = 0; i < o.jobs; i += 500) {
      const n = Math.min(500, o.jobs - i);
      await Promise.all(Array.from({ length: n }, (_, k) => js.publish(subject, JSON.stringify({ id: `${stream}:${i + k}` }))));
    }
    let acked = 0;
    const started = performance.now();
    if (side === "without") {
      const consumer = await js.consumers.get(stream, "bench");
      const messages = await consumer.consume({ max_messages: o.inFlight });
      const running = new Set<Promise<void>>();
      for await (const msg of messages) {
        const run = (async () => {
          const data = JSON.parse(new TextDecoder().decode(msg.data)) as { id: string };
          await o.pool.query({ ...o.write, values: [data.id] });
          msg.ack();
          acked++;
        })().finally(() => running.delete(run));
        running.add(run);
        while (running.size >= o.inFlight) await Promise.race(running);
        if (acked + running.size >= o.jobs) break;
      }
      await Promise.all(running);
      const seconds = (performance.now() - started) / 1000;
      messages.stop();
      await nc.flush();
      return o.jobs / seconds;
    }
    const consumer = await consumeIdempotent<{ id: string }, void>({
      connection: nc,
      stream,
      durable: "bench",
      effects: o.effects,
      handler: o.handler,
      concurrency: o.inFlight,
      onDecision: (d) => {
        if (d.action === "ack") acked++;
        else throw new Error(`bench:e2e: a delivery was not acked (${d.action})`);
      },
    });
    await until("the adapter's acks", () => acked >= o.jobs);
    const seconds = (performance.now() - started) / 1000;
    await consumer.close();
    return o.jobs / seconds;
  } finally {
    await jsm.streams.delete(stream).catch(() => {});
    await nc.close().catch(() => {});
  }
}
