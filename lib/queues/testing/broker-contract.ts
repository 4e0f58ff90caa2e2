import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import pg from "pg";
import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { createEffects, type Duration } from "../../idempotency";
import {
  type Decision,
  type DeliveryInfo,
  type EffectsRunner,
  type IdempotentHandler,
  MAX_ATTEMPTS,
  UNDECODABLE_MESSAGE,
} from "../deliveries";
import { CAPTURE_LEDGER_DDL, type Capture, capture } from "./capture-ledger";
import { sleep, waitFor } from "./wait";

/**
 * The adapter contract every message broker's adapter passes against its real server: delivered
 * twice, delivered concurrently, the worker SIGKILLed mid-step and redelivered, the connection
 * dropped mid-job, poison messages. Each broker's test file gives a harness and calls
 * describeBrokerContract; broker-only behaviour (prefetch, working(), Msg-Id) is tested beside it.
 */

export type BrokerName = "rabbitmq" | "nats";

export interface ContractWorkerOptions<R> {
  effects: EffectsRunner;
  handler: IdempotentHandler<Capture, R>;
  onDecision: (decision: Decision<R>, delivery: DeliveryInfo) => void;
  onDeadLetter: (code: string) => void;
}

export interface ContractWorker {
  close(): Promise<void>;
  /** Cuts the worker's connection to the broker under it (its socket, not a clean close). */
  dropConnection(): Promise<void>;
  /** Connections made after the first (the worker noticed the drop and came back). */
  reconnections(): number;
}

export interface ContractQueue {
  name: string;
  /** Publishes a JSON message, or a raw body as given. */
  publish(data: Capture | Buffer, options?: { messageId?: string }): Promise<void>;
  work<R>(options: ContractWorkerOptions<R>): Promise<ContractWorker>;
  /** Messages in the broker's dead-letter place for this queue. */
  deadLettered(): Promise<number>;
  /** With every worker closed: messages the broker would still deliver (none means every one was acked or dead-lettered). */
  outstanding(): Promise<number>;
  /** What the crash child (./broker-crash-child.ts) needs to consume this queue. */
  childEnv: Record<string, string>;
  cleanup(): Promise<void>;
}

export interface BrokerHarness {
  broker: BrokerName;
  /** null: the broker does not answer here (the suite is skipped, loudly, by findTest*). */
  url: string | null;
  /** A fresh queue (unique names) whose messages are delivered at most `maxAttempts` times. */
  createQueue(options: { maxAttempts: number }): Promise<ContractQueue>;
}

const ROOT = path.resolve(import.meta.dirname, "../../..");
const silent = pino({ level: "silent" });

export function describeBrokerContract(harness: BrokerHarness): void {
  let db: TestDatabase;
  const cleanup: (() => Promise<unknown>)[] = [];

  describe.skipIf(!harness.url)(`${harness.broker} adapter contract (real ${harness.broker} server)`, () => {
    beforeAll(async () => {
      db = await createTestDatabase();
      await db.pool.query(CAPTURE_LEDGER_DDL);
    });
    afterAll(async () => {
      for (const fn of cleanup.reverse()) await fn().catch(() => {});
      await db?.drop();
    });

    async function queue(maxAttempts = 5) {
      const q = await harness.createQueue({ maxAttempts });
      cleanup.push(() => q.cleanup());
      return q;
    }

    /** A worker "process": its own pg pool, effects and broker connection. */
    async function worker<R>(q: ContractQueue, handler: IdempotentHandler<Capture, R>, wait: Duration = "200ms") {
      const pool = new pg.Pool({ connectionString: db.sqlUrl, max: 4 });
      pool.on("error", () => {});
      const effects = createEffects({ db: pool, lease: "5s", wait, registry: new Registry(), logger: silent, rollups: false });
      const decisions: { decision: Decision<R>; delivery: DeliveryInfo }[] = [];
      const deadLetters: string[] = [];
      const w = await q.work<R>({
        effects,
        handler,
        onDecision: (decision, delivery) => decisions.push({ decision, delivery }),
        onDeadLetter: (code) => deadLetters.push(code),
      });
      let closed = false;
      const close = async () => {
        if (closed) return;
        closed = true;
        await w.close();
        await effects.close();
        await pool.end();
      };
      cleanup.push(close);
      return { worker: w, decisions, deadLetters, close };
    }

    /**
     * Every message acked or dead-lettered: with the workers closed the broker would deliver
     * nothing more. (JetStream applies an ack shortly after the client sent it, hence the wait; a
     * lost ack would keep the count above zero.)
     */
    const settled = (q: ContractQueue) =>
      waitFor("nothing left for the broker to deliver", async () => (await q.outstanding()) === 0, 10_000);

    const ledgerRows = async (m: Capture) =>
      (
        await db.pool.query<{ charge_id: string }>(
          "SELECT charge_id FROM queue_test_capture_ledger WHERE tenant_id = $1 AND order_id = $2",
          [m.tenant, m.orderId],
        )
      ).rows;

    const unique = (prefix: string): Capture => ({
      tenant: `${harness.broker}-t`,
      orderId: `${prefix}-${randomBytes(4).toString("hex")}`,
      amountCents: 1200,
    });

    const captureOnce: IdempotentHandler<Capture, unknown> = {
      kind: "once",
      tenant: (m) => m.tenant,
      key: (m) => `capture:${m.orderId}`,
      run: (m) => capture(db.pool, m),
    };

    it("a message the broker redelivers after the handler failed is suppressed, acked, and answers the stored outcome", async () => {
      const q = await queue();
      const message = unique("retry");
      let runs = 0;
      const { decisions, close } = await worker<unknown>(q, {
        kind: "job",
        tenant: (m) => m.tenant,
        run: async (m, job, delivery) => {
          const charge = await job.external(`capture:${m.orderId}`, async () => {
            runs++;
            return { chargeId: `ch_${runs}` };
          });
          if (delivery.attempt === 1) throw new Error("connection reset before the ack");
          return charge;
        },
      });
      await q.publish(message);
      await waitFor("the retried delivery's ack", () => decisions.some((d) => d.decision.action === "ack"));
      expect(runs).toBe(1);
      expect(decisions.map((d) => [d.decision.action, d.delivery.attempt, d.delivery.redelivered])).toEqual([
        ["fail", 1, false],
        ["ack", 2, true],
      ]);
      expect(decisions[1]?.decision).toMatchObject({ result: { chargeId: "ch_1" }, duplicate: true });
      // The message id is the broker's and survives the redelivery.
      expect(decisions[1]?.delivery.messageId).toBe(decisions[0]?.delivery.messageId);
      expect(decisions[0]?.delivery.publishedAt).toBeInstanceOf(Date);
      await close();
      await settled(q);
    });

    it("the same message published twice runs its effect once; the second copy is acked as a duplicate with the stored outcome", async () => {
      const q = await queue();
      const message = unique("twice");
      const { decisions, close } = await worker<unknown>(q, captureOnce);
      await q.publish(message);
      await q.publish(message);
      await waitFor("both copies acked", () => decisions.filter((d) => d.decision.action === "ack").length === 2);
      const rows = await ledgerRows(message);
      expect(rows).toHaveLength(1);
      expect(decisions.map((d) => d.decision)).toEqual([
        { action: "ack", result: { chargeId: rows[0]?.charge_id, amountCents: 1200 }, duplicate: false },
        { action: "ack", result: { chargeId: rows[0]?.charge_id, amountCents: 1200 }, duplicate: true },
      ]);
      await close();
      await settled(q);
    });

    it("two copies delivered at once to two workers: one runs, the other is retried later (never dropped), then suppressed", async () => {
      const q = await queue();
      const message = unique("concurrent");
      let runs = 0;
      let release = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      const handler: IdempotentHandler<Capture, unknown> = {
        kind: "once",
        tenant: (m) => m.tenant,
        key: (m) => `capture:${m.orderId}`,
        run: async () => {
          runs++;
          await Promise.race([held, sleep(15_000)]);
          return { chargeId: "ch_only" };
        },
      };
      const a = await worker<unknown>(q, handler, "100ms");
      const b = await worker<unknown>(q, handler, "100ms");
      await q.publish(message);
      await q.publish(message);
      const all = () => [...a.decisions, ...b.decisions].map((d) => d.decision);
      await waitFor("the copy in flight elsewhere to be retried later", () => all().some((d) => d.action === "retry-later"));
      release();
      await waitFor("both copies acked", () => all().filter((d) => d.action === "ack").length === 2);
      expect(runs).toBe(1);
      const acks = all().filter((d) => d.action === "ack");
      expect(acks.map((d) => (d as { duplicate: boolean }).duplicate).sort()).toEqual([false, true]);
      for (const d of acks) expect(d).toMatchObject({ result: { chargeId: "ch_only" } });
      await a.close();
      await b.close();
      await settled(q);
    });

    it("a worker process SIGKILLed after the effect, before the ack: the broker redelivers, the effect is not run again", async () => {
      const q = await queue();
      const message = unique("sigkill");
      await q.publish(message);
      const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "lib/queues/testing/broker-crash-child.ts")], {
        cwd: ROOT,
        env: { ...process.env, ...q.childEnv, BROKER: harness.broker, DATABASE_URL: db.sqlUrl },
        stdio: ["ignore", "pipe", "inherit"],
      });
      let output = "";
      child.stdout.on("data", (chunk) => {
        output += String(chunk);
      });
      const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, s) => resolve(s)));
      expect(signal).toBe("SIGKILL");
      expect(output).toContain("dying before the ack");
      expect(await ledgerRows(message)).toHaveLength(1);

      const { decisions, close } = await worker<unknown>(q, captureOnce);
      await waitFor("the redelivery", () => decisions.length > 0);
      const rows = await ledgerRows(message);
      expect(rows).toHaveLength(1);
      expect(decisions.map((d) => d.decision)).toEqual([
        { action: "ack", result: { chargeId: rows[0]?.charge_id, amountCents: 1200 }, duplicate: true },
      ]);
      expect(decisions[0]?.delivery).toMatchObject({ redelivered: true, attempt: 2 });
      await close();
      await settled(q);
    });

    it("the connection dropped mid-job: the worker reconnects and consumes again; the effect ran once and the message ends acked", async () => {
      const q = await queue();
      const message = unique("dropped");
      let runs = 0;
      let started = () => {};
      const running = new Promise<void>((r) => {
        started = r;
      });
      let release = () => {};
      const held = new Promise<void>((r) => {
        release = r;
      });
      const {
        worker: w,
        decisions,
        close,
      } = await worker<unknown>(q, {
        kind: "once",
        tenant: (m) => m.tenant,
        key: (m) => `capture:${m.orderId}`,
        run: async (m) => {
          if (m.orderId !== message.orderId) return capture(db.pool, m);
          runs++;
          started();
          await Promise.race([held, sleep(15_000)]);
          return capture(db.pool, m);
        },
      });
      await q.publish(message);
      await running;
      await w.dropConnection();
      release();
      await waitFor("the worker to reconnect", () => w.reconnections() > 0);
      // Consuming again: a message published after the drop is delivered and run.
      const after = unique("after-drop");
      await q.publish(after);
      await waitFor("the message published after the drop", async () => (await ledgerRows(after)).length === 1);
      await waitFor("the dropped message acked", () =>
        decisions.some((d) => d.delivery.messageId === decisions[0]?.delivery.messageId && d.decision.action === "ack"),
      );
      expect(runs).toBe(1);
      expect(await ledgerRows(message)).toHaveLength(1);
      const mine = decisions.filter((d) => d.delivery.messageId === decisions[0]?.delivery.messageId);
      // Every delivery of it: the first run's ack (sent or not), then any redelivery answered in
      // flight or as a duplicate — never a second run.
      for (const d of mine) expect(["ack", "retry-later"]).toContain(d.decision.action);
      expect(mine.filter((d) => d.decision.action === "ack" && !(d.decision as { duplicate: boolean }).duplicate)).toHaveLength(
        1,
      );
      // An ack sent as the connection went may be lost: the broker then delivers the message again
      // (RabbitMQ at once, JetStream after AckWait) and the reconnected worker answers it as a
      // duplicate. Wait for that while the worker runs, then check nothing is left once it stops.
      await settled(q);
      await close();
      await settled(q);
      for (const d of decisions.filter((d) => d.delivery.messageId === decisions[0]?.delivery.messageId)) {
        expect(["ack", "retry-later"]).toContain(d.decision.action);
      }
      expect(runs).toBe(1);
    });

    it("poison: a body that does not decode is dead-lettered without running anything; a message failing every attempt is dead-lettered at the last", async () => {
      const q = await queue(3);
      const failing = unique("always-fails");
      let runs = 0;
      const { decisions, deadLetters, close } = await worker<unknown>(q, {
        kind: "once",
        tenant: (m) => m.tenant,
        key: (m) => `capture:${m.orderId}`,
        run: async () => {
          runs++;
          throw new Error("the provider rejects this request every time");
        },
      });
      await q.publish(Buffer.from("{not json"));
      await q.publish(failing);
      await waitFor("both dead-lettered", () => deadLetters.length === 2);
      expect(deadLetters.sort()).toEqual([MAX_ATTEMPTS, UNDECODABLE_MESSAGE]);
      expect(runs).toBe(3);
      expect(decisions.filter((d) => d.decision.action === "fail").map((d) => d.delivery.attempt)).toEqual([1, 2]);
      await waitFor("the broker's dead-letter place to hold both", async () => (await q.deadLettered()) === 2);
      await close();
      await settled(q);
    });

    it("a key reused with a different payload is dead-lettered with the library's reason, and nothing runs for it", async () => {
      const q = await queue();
      const first = unique("reuse");
      let runs = 0;
      const { decisions, deadLetters, close } = await worker<unknown>(q, {
        kind: "once",
        tenant: (m) => m.tenant,
        key: (m) => `capture:${m.orderId}`,
        run: async (m) => {
          runs++;
          return { charged: m.amountCents };
        },
      });
      await q.publish(first);
      await waitFor("the first message", () => decisions.length === 1);
      await q.publish({ ...first, amountCents: 9999 });
      await waitFor("the reused key dead-lettered", () => deadLetters.length === 1);
      expect(deadLetters).toEqual(["EFFECT_KEY_REUSE"]);
      expect(runs).toBe(1);
      await waitFor("the broker's dead-letter place to hold it", async () => (await q.deadLettered()) === 1);
      await close();
      await settled(q);
    });
  });
}
