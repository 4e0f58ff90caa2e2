import { randomBytes } from "node:crypto";
import amqp, { type ChannelModel, type ConfirmChannel } from "amqplib";
import pg from "pg";
import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { createEffects } from "../idempotency";
import type { DeliveryInfo } from "./deliveries";
import {
  ATTEMPT_HEADER,
  assertTopology,
  consumeIdempotent,
  deadLetterQueueOf,
  deliveryOfAmqpMessage,
  publishJson,
  retryQueueOf,
} from "./rabbitmq";
import { type BrokerHarness, describeBrokerContract } from "./testing/broker-contract";
import { findTestRabbit } from "./testing/brokers";
import { sleep, waitFor } from "./testing/wait";

const rabbitUrl = await findTestRabbit();
const uniqueQueue = (what: string) => `ob-test-${what}-${process.pid}-${randomBytes(4).toString("hex")}`;

/** The broker's socket under a connection: destroying it is a network cut, not a clean close. */
const socketOf = (model: ChannelModel) => (model.connection as unknown as { stream: { destroy(error?: Error): void } }).stream;

async function adminChannel(url: string) {
  const connection = await amqp.connect(url);
  const channel = await connection.createConfirmChannel();
  return { connection, channel };
}

async function deleteTopology(channel: ConfirmChannel, queue: string) {
  for (const q of [queue, retryQueueOf(queue), deadLetterQueueOf(queue)]) await channel.deleteQueue(q).catch(() => {});
  await channel.deleteExchange(deadLetterQueueOf(queue)).catch(() => {});
}

const harness: BrokerHarness = {
  broker: "rabbitmq",
  url: rabbitUrl,
  async createQueue({ maxAttempts }) {
    const url = rabbitUrl as string;
    const name = uniqueQueue("contract");
    const admin = await adminChannel(url);
    await assertTopology(admin.channel, name, { maxAttempts });
    const count = async (q: string) => (await admin.channel.checkQueue(q)).messageCount;
    return {
      name,
      childEnv: { RABBITMQ_URL: url, QUEUE: name },
      async publish(data, options = {}) {
        if (Buffer.isBuffer(data)) {
          await new Promise<void>((resolve, reject) =>
            admin.channel.sendToQueue(
              name,
              data,
              { persistent: true, messageId: options.messageId ?? crypto.randomUUID() },
              (e) => (e ? reject(e) : resolve()),
            ),
          );
        } else await publishJson(admin.channel, name, data, options);
      },
      async work(o) {
        let connections = 0;
        const consumer = await consumeIdempotent({
          ...o,
          url,
          queue: name,
          maxAttempts,
          prefetch: 4,
          inFlightDelayMs: 300,
          backoffMs: () => 200,
          reconnectDelayMs: 200,
          onDeadLetter: (info) => o.onDeadLetter(info.code),
          onConnected: () => {
            connections++;
          },
        });
        return {
          close: () => consumer.close(),
          reconnections: () => connections - 1,
          async dropConnection() {
            const live = consumer.connection;
            if (!live) throw new Error("no live connection to drop");
            // As a reset connection does (ECONNRESET); a silent cut is found by the heartbeat instead.
            socketOf(live).destroy(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }));
          },
        };
      },
      deadLettered: () => count(deadLetterQueueOf(name)),
      // Workers closed, so nothing is unacked: every message the broker still has is ready.
      outstanding: async () => (await count(name)) + (await count(retryQueueOf(name))),
      async cleanup() {
        await deleteTopology(admin.channel, name);
        await admin.connection.close();
      },
    };
  },
};

describeBrokerContract(harness);

describe.skipIf(!rabbitUrl)("RabbitMQ adapter: the broker's own mechanisms (real RabbitMQ)", () => {
  const url = rabbitUrl as string;
  let db: TestDatabase;
  let admin: Awaited<ReturnType<typeof adminChannel>>;
  const cleanup: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
    admin = await adminChannel(url);
  });
  afterAll(async () => {
    for (const fn of cleanup.reverse()) await fn().catch(() => {});
    await admin?.connection.close();
    await db?.drop();
  });

  function effects() {
    const pool = new pg.Pool({ connectionString: db.sqlUrl, max: 4 });
    pool.on("error", () => {});
    const e = createEffects({
      db: pool,
      lease: "5s",
      wait: "200ms",
      registry: new Registry(),
      logger: pino({ level: "silent" }),
      rollups: false,
    });
    cleanup.push(
      () => e.close(),
      () => pool.end(),
    );
    return e;
  }

  async function topology(queueType: "quorum" | "classic" = "quorum") {
    const name = uniqueQueue(queueType);
    await assertTopology(admin.channel, name, { queueType });
    cleanup.push(() => deleteTopology(admin.channel, name));
    return name;
  }

  it("prefetch bounds the deliveries run at once", async () => {
    const queue = await topology();
    let running = 0;
    let most = 0;
    let done = 0;
    const consumer = await consumeIdempotent<{ tenant: string; n: number }, unknown>({
      effects: effects(),
      url,
      queue,
      prefetch: 2,
      handler: {
        kind: "once",
        tenant: (m) => m.tenant,
        key: (m) => `step:${m.n}`,
        run: async () => {
          running++;
          most = Math.max(most, running);
          await sleep(150);
          running--;
          done++;
          return null;
        },
      },
    });
    cleanup.push(() => consumer.close());
    for (let n = 0; n < 8; n++) await publishJson(admin.channel, queue, { tenant: "acme", n });
    await waitFor("all eight", () => done === 8);
    expect(most).toBe(2);
  });

  it("the attempt counts the quorum queue's x-delivery-count on top of the attempt a re-published copy carries; id and time come from the properties", async () => {
    const queue = await topology();
    const publishedAt = new Date("2026-12-01T10:00:00Z");
    await publishJson(admin.channel, queue, { x: 1 }, { messageId: "msg-42", timestamp: publishedAt.getTime() / 1000 });
    await new Promise<void>((resolve, reject) =>
      admin.channel.sendToQueue(queue, Buffer.from("{}"), { headers: { [ATTEMPT_HEADER]: 3 } }, (e) =>
        e ? reject(e) : resolve(),
      ),
    );
    const seen: DeliveryInfo[] = [];
    const reader = await admin.connection.createChannel();
    cleanup.push(() => reader.close().catch(() => {}));
    for (let i = 0; i < 2; i++) {
      const m = await waitFor("a message", async () => (await reader.get(queue)) || null);
      seen.push(deliveryOfAmqpMessage(queue, m));
      reader.nack(m, false, true); // back to the queue: x-delivery-count + 1
      const again = await waitFor("it again", async () => (await reader.get(queue)) || null);
      seen.push(deliveryOfAmqpMessage(queue, again));
      reader.ack(again);
    }
    expect(seen.map((d) => [d.attempt, d.redelivered])).toEqual([
      [1, false],
      [2, true],
      [3, true],
      [4, true],
    ]);
    expect(seen[0]).toMatchObject({ messageId: "msg-42", publishedAt });
    // No message id: the body's hash, the same on every delivery.
    expect(seen[2]?.messageId).toMatch(/^sha256:/);
    expect(seen[3]?.messageId).toBe(seen[2]?.messageId);
  });

  it("on a classic queue only the redelivered flag is known: a redelivery is attempt 2", async () => {
    const queue = await topology("classic");
    await publishJson(admin.channel, queue, { x: 1 });
    const reader = await admin.connection.createChannel();
    cleanup.push(() => reader.close().catch(() => {}));
    const first = await waitFor("a message", async () => (await reader.get(queue)) || null);
    reader.nack(first, false, true);
    const second = await waitFor("it again", async () => (await reader.get(queue)) || null);
    reader.ack(second);
    expect([deliveryOfAmqpMessage(queue, first).attempt, deliveryOfAmqpMessage(queue, second).attempt]).toEqual([1, 2]);
  });
});
