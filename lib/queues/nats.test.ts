import { randomBytes } from "node:crypto";
import type { NatsConnection } from "nats";
import pg from "pg";
import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { createEffects } from "../idempotency";
import type { Decision, DeliveryInfo } from "./deliveries";
import { assertJetStream, consumeIdempotent, type JetStreamTopology, natsConnection } from "./nats";
import { type BrokerHarness, describeBrokerContract } from "./testing/broker-contract";
import { findTestNats } from "./testing/brokers";
import { sleep, waitFor } from "./testing/wait";

const natsUrl = await findTestNats();
const uniqueName = () => `ob_test_${process.pid}_${randomBytes(4).toString("hex")}`;
/** AckWait in these tests: short, so a SIGKILLed worker's message comes back soon. */
const ACK_WAIT_MS = 2000;

/** The stream and consumer of one test queue: jobs on `<name>.jobs`, dead letters on `<name>.dead-letter`. */
function topologyFor(name: string, extra: Partial<JetStreamTopology> = {}) {
  const jobs = `${name}.jobs`;
  const deadLetter = `${name}.dead-letter`;
  const topology: JetStreamTopology = {
    stream: name,
    subjects: [jobs, deadLetter],
    durable: "worker",
    filterSubject: jobs,
    ackWaitMs: ACK_WAIT_MS,
    ...extra,
  };
  return { jobs, deadLetter, topology };
}

async function countOn(nc: NatsConnection, stream: string, subject: string) {
  const jsm = await nc.jetstreamManager();
  const info = await jsm.streams.info(stream, { subjects_filter: subject });
  return info.state.subjects?.[subject] ?? 0;
}

const harness: BrokerHarness = {
  broker: "nats",
  url: natsUrl,
  async createQueue({ maxAttempts }) {
    const url = natsUrl as string;
    const name = uniqueName();
    const admin = await natsConnection(url);
    const jsm = await admin.jetstreamManager();
    const { jobs, deadLetter, topology } = topologyFor(name, { maxDeliver: maxAttempts });
    await assertJetStream(jsm, topology);
    const js = admin.jetstream();
    return {
      name,
      childEnv: { NATS_URL: url, STREAM: name, DURABLE: topology.durable },
      async publish(data, options = {}) {
        await js.publish(jobs, Buffer.isBuffer(data) ? data : JSON.stringify(data), { msgID: options.messageId });
      },
      async work(o) {
        const connection = await natsConnection(url);
        let reconnects = 0;
        (async () => {
          for await (const s of connection.status()) if (s.type === "reconnect") reconnects++;
        })();
        const consumer = await consumeIdempotent({
          ...o,
          connection,
          stream: name,
          durable: topology.durable,
          concurrency: 4,
          inFlightDelayMs: 300,
          backoffMs: () => 200,
          deadLetterSubject: deadLetter,
          onDeadLetter: (info) => o.onDeadLetter(info.code),
        });
        return {
          async close() {
            await consumer.close();
            await connection.close();
          },
          reconnections: () => reconnects,
          // The client drops its socket and connects again, as after a network cut.
          dropConnection: () => connection.reconnect(),
        };
      },
      deadLettered: () => countOn(admin, name, deadLetter),
      async outstanding() {
        const info = await jsm.consumers.info(name, topology.durable);
        return info.num_pending + info.num_ack_pending;
      },
      async cleanup() {
        await jsm.streams.delete(name).catch(() => {});
        await admin.close();
      },
    };
  },
};

describeBrokerContract(harness);

describe.skipIf(!natsUrl)("NATS JetStream adapter: the broker's own mechanisms (real nats-server)", () => {
  const url = natsUrl as string;
  let db: TestDatabase;
  let nc: NatsConnection;
  const cleanup: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
    nc = await natsConnection(url);
  });
  afterAll(async () => {
    for (const fn of cleanup.reverse()) await fn().catch(() => {});
    await nc?.close();
    await db?.drop();
  });

  function effects() {
    const pool = new pg.Pool({ connectionString: db.sqlUrl, max: 4 });
    pool.on("error", () => {});
    const e = createEffects({
      db: pool,
      lease: "30s",
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

  async function stream(extra: Partial<JetStreamTopology> = {}) {
    const name = uniqueName();
    const t = topologyFor(name, extra);
    const jsm = await nc.jetstreamManager();
    await assertJetStream(jsm, t.topology);
    cleanup.push(() => jsm.streams.delete(name));
    return { name, ...t };
  }

  /** A step that takes three AckWaits; what JetStream delivered meanwhile, with working() every `workingIntervalMs`. */
  async function longStep(workingIntervalMs: number) {
    const { name, jobs, topology } = await stream({ ackWaitMs: 1000 });
    const deliveries: { decision: Decision<unknown>; delivery: DeliveryInfo }[] = [];
    let runs = 0;
    const consumer = await consumeIdempotent<{ tenant: string; id: string }, unknown>({
      effects: effects(),
      connection: nc,
      stream: name,
      durable: topology.durable,
      workingIntervalMs,
      inFlightDelayMs: 5000,
      handler: {
        kind: "once",
        tenant: (m) => m.tenant,
        key: (m) => `long:${m.id}`,
        run: async () => {
          runs++;
          await sleep(3000);
          return "done";
        },
      },
      onDecision: (decision, delivery) => deliveries.push({ decision, delivery }),
    });
    cleanup.push(() => consumer.close());
    await nc.jetstream().publish(jobs, JSON.stringify({ tenant: "acme", id: name }));
    await waitFor("the long step's ack", () => deliveries.some((d) => d.decision.action === "ack"));
    await consumer.close();
    return { runs, deliveries };
  }

  it("a step longer than AckWait says working() and is delivered once; without it JetStream hands it out again mid-step", async () => {
    const kept = await longStep(300);
    expect(kept.runs).toBe(1);
    expect(kept.deliveries.map((d) => [d.decision.action, d.delivery.attempt])).toEqual([["ack", 1]]);
    // The control: working() too rarely to matter. The redelivery arrives while the step runs,
    // finds it in flight and is retried later — the library, not the broker, kept it single.
    const lapsed = await longStep(60_000);
    expect(lapsed.runs).toBe(1);
    expect(lapsed.deliveries.some((d) => d.decision.action === "retry-later" && d.delivery.attempt >= 2)).toBe(true);
  });

  it("Nats-Msg-Id drops a re-publish inside the stream's duplicate window only; after it the library suppresses the copy", async () => {
    const { name, jobs, topology } = await stream({ duplicateWindowMs: 1000 });
    const js = nc.jetstream();
    const message = JSON.stringify({ tenant: "acme", id: "pub-1" });
    const first = await js.publish(jobs, message, { msgID: "order-pub-1" });
    const inWindow = await js.publish(jobs, message, { msgID: "order-pub-1" });
    expect([first.duplicate, inWindow.duplicate, inWindow.seq]).toEqual([false, true, first.seq]);
    await sleep(2500); // past the window: the stream has forgotten the id
    const afterWindow = await js.publish(jobs, message, { msgID: "order-pub-1" });
    expect(afterWindow.duplicate).toBe(false);
    let runs = 0;
    const decisions: Decision<unknown>[] = [];
    const consumer = await consumeIdempotent<{ tenant: string; id: string }, unknown>({
      effects: effects(),
      connection: nc,
      stream: name,
      durable: topology.durable,
      handler: {
        kind: "once",
        tenant: (m) => m.tenant,
        key: (m) => `publish:${m.id}`,
        run: async () => ++runs,
      },
      onDecision: (d) => decisions.push(d),
    });
    cleanup.push(() => consumer.close());
    await waitFor("both stored copies", () => decisions.length === 2);
    expect(runs).toBe(1);
    expect(decisions).toEqual([
      { action: "ack", result: 1, duplicate: false },
      { action: "ack", result: 1, duplicate: true },
    ]);
  });
});
