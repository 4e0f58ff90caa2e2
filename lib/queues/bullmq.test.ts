import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { type Job, Queue } from "bullmq";
import pg from "pg";
import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { createEffects, type Duration } from "../idempotency";
import { createIdempotentWorker, redisConnection } from "./bullmq";
import type { Decision, DeliveryInfo, IdempotentHandler } from "./deliveries";
import { CAPTURE_LEDGER_DDL, capture } from "./testing/capture-ledger";
import { findTestRedis } from "./testing/redis";
import { sleep, waitFor } from "./testing/wait";

interface Msg {
  tenant: string;
  orderId: string;
  amountCents: number;
}

const redisUrl = await findTestRedis();
const ROOT = path.resolve(import.meta.dirname, "../..");
const PREFIX = `ob-test-${process.pid}-${randomBytes(3).toString("hex")}`;
const silent = pino({ level: "silent" });
const unique = (name: string) => `${name}-${randomBytes(4).toString("hex")}`;

let db: TestDatabase;
const cleanup: (() => Promise<unknown>)[] = [];

describe.skipIf(!redisUrl)("BullMQ adapter (real Redis)", () => {
  const url = redisUrl as string;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.pool.query(CAPTURE_LEDGER_DDL);
  });
  afterAll(async () => {
    for (const fn of cleanup.reverse()) await fn().catch(() => {});
    await db.drop();
  });

  function queueFor(name: string) {
    const connection = redisConnection(url);
    const queue = new Queue(name, { connection, prefix: PREFIX });
    cleanup.push(async () => {
      await queue.obliterate({ force: true }).catch(() => {});
      await queue.close();
      connection.disconnect();
    });
    return queue;
  }

  /** A worker "process": its own pg pool, effects, registry and Redis connection. */
  function worker<R>(
    queue: string,
    handler: IdempotentHandler<Msg, R>,
    extra: {
      wait?: Duration;
      onDecision?: (d: Decision<R>, delivery: DeliveryInfo) => void;
      onDeadLetter?: (reason: string) => void;
    } = {},
  ) {
    const pool = new pg.Pool({ connectionString: db.sqlUrl, max: 4 });
    pool.on("error", () => {});
    const registry = new Registry();
    const effects = createEffects({
      db: pool,
      lease: "5s",
      wait: extra.wait ?? "200ms",
      registry,
      logger: silent,
      rollups: false,
    });
    const connection = redisConnection(url);
    const w = createIdempotentWorker<Msg, R>(queue, {
      effects,
      handler,
      connection,
      prefix: PREFIX,
      inFlightDelayMs: 500,
      workerOptions: { stalledInterval: 500 },
      onDecision: extra.onDecision,
      onDeadLetter: ({ reason }) => extra.onDeadLetter?.(reason),
    });
    cleanup.push(
      () => w.close(),
      async () => connection.disconnect(),
      () => effects.close(),
      () => pool.end(),
    );
    return { worker: w, registry, pool };
  }

  // The state first, then the job: a job read before it completed carries no return value yet.
  const finished = async (queue: Queue, id: string) => {
    const state = await queue.getJobState(id);
    return state === "completed" || state === "failed" ? ((await queue.getJob(id)) as Job) : null;
  };

  it("a job BullMQ retries after a failure is suppressed, completes, and returns the stored outcome", async () => {
    const name = unique("retry");
    const queue = queueFor(name);
    let runs = 0;
    const deliveries: DeliveryInfo[] = [];
    const { registry } = worker<unknown>(name, {
      kind: "job",
      tenant: (m) => m.tenant,
      run: async (m, job, delivery) => {
        deliveries.push(delivery);
        const charge = await job.external(`capture:${m.orderId}`, async () => {
          runs++;
          return { chargeId: `ch_${runs}` };
        });
        if (delivery.attempt === 1) throw new Error("connection reset before the ack");
        return charge;
      },
    });
    const added = await queue.add(
      "capture",
      { tenant: "acme", orderId: "o-1", amountCents: 100 },
      {
        attempts: 3,
        backoff: { type: "fixed", delay: 200 },
      },
    );
    const job = await waitFor("the job to finish", () => finished(queue, added.id!));
    expect(await job.getState()).toBe("completed");
    expect(runs).toBe(1);
    expect(job.returnvalue).toEqual({ outcome: { chargeId: "ch_1" }, duplicate: true });
    expect(deliveries.map((d) => d.redelivered)).toEqual([false, true]);
    const suppressions = (await registry.getSingleMetric("idem_duplicate_suppressions_total")?.get())?.values ?? [];
    expect(suppressions.reduce((s, v) => s + v.value, 0)).toBe(1);
  });

  it("a stalled job (its worker process was SIGKILLed before the ack) is redelivered and suppressed with the stored outcome", async () => {
    const name = unique("stalled");
    const queue = queueFor(name);
    const message: Msg = { tenant: "globex", orderId: "o-2", amountCents: 4200 };
    const added = await queue.add("capture", message, { attempts: 3 });
    const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "lib/queues/testing/bull-crash-child.ts")], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: db.sqlUrl, REDIS_URL: url, QUEUE: name, PREFIX },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += String(chunk);
    });
    const exit = await new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    expect(exit).toBe("SIGKILL");
    expect(output).toContain("dying before the ack");
    expect(await (await queue.getJob(added.id!))?.getState()).toBe("active");

    const decisions: Decision<unknown>[] = [];
    const deliveries: DeliveryInfo[] = [];
    worker<unknown>(
      name,
      {
        kind: "once",
        tenant: (m) => m.tenant,
        key: (m) => `capture:${m.orderId}`,
        run: (m) => capture(db.pool, m),
      },
      {
        onDecision: (d, delivery) => {
          decisions.push(d);
          deliveries.push(delivery);
        },
      },
    );
    const job = await waitFor("the stalled job to be redelivered", () => finished(queue, added.id!));
    expect(await job.getState()).toBe("completed");
    const { rows } = await db.pool.query<{ charge_id: string }>(
      "SELECT charge_id FROM queue_test_capture_ledger WHERE tenant_id = $1 AND order_id = $2",
      [message.tenant, message.orderId],
    );
    expect(rows).toHaveLength(1);
    expect(job.returnvalue).toEqual({
      outcome: { chargeId: rows[0]?.charge_id, amountCents: 4200 },
      duplicate: true,
    });
    expect(decisions.map((d) => d.action)).toEqual(["ack"]);
    expect(deliveries[0]?.redelivered).toBe(true);
  });

  it("an in-flight duplicate on another worker is delayed and delivered again, never dropped, then suppressed", async () => {
    const name = unique("inflight");
    const queue = queueFor(name);
    let runs = 0;
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const delayed: Decision<unknown>[] = [];
    const handler: IdempotentHandler<Msg, unknown> = {
      kind: "once",
      tenant: (m) => m.tenant,
      key: (m) => `capture:${m.orderId}`,
      run: async () => {
        runs++;
        await Promise.race([held, sleep(15_000)]);
        return { chargeId: "ch_only" };
      },
    };
    const onDecision = (d: Decision<unknown>) => {
      if (d.action === "retry-later") {
        delayed.push(d);
        release();
      }
    };
    worker(name, handler, { wait: "100ms", onDecision });
    worker(name, handler, { wait: "100ms", onDecision });
    const message: Msg = { tenant: "initech", orderId: "o-3", amountCents: 1 };
    const [first, second] = await queue.addBulk([
      { name: "capture", data: message, opts: { attempts: 2 } },
      { name: "capture", data: message, opts: { attempts: 2 } },
    ]);
    const jobs = [
      await waitFor("copy 1", () => finished(queue, first!.id!)),
      await waitFor("copy 2", () => finished(queue, second!.id!)),
    ];
    expect(runs).toBe(1);
    expect(delayed.length).toBeGreaterThanOrEqual(1);
    for (const job of jobs) expect(await job.getState()).toBe("completed");
    expect(jobs.map((j) => j.returnvalue).sort((x, y) => Number(x.duplicate) - Number(y.duplicate))).toEqual([
      { outcome: { chargeId: "ch_only" }, duplicate: false },
      { outcome: { chargeId: "ch_only" }, duplicate: true },
    ]);
    // Being delayed while in flight does not spend an attempt.
    expect(jobs.map((j) => j.attemptsMade).sort()).toEqual([1, 1]);
  });

  it("a key reused with a different payload is dead-lettered (failed, no retries) with the reason", async () => {
    const name = unique("reuse");
    const queue = queueFor(name);
    let runs = 0;
    const deadLetters: string[] = [];
    worker<unknown>(
      name,
      {
        kind: "once",
        tenant: (m) => m.tenant,
        key: (m) => `capture:${m.orderId}`,
        run: async (m) => {
          runs++;
          return { charged: m.amountCents };
        },
      },
      { onDeadLetter: (reason) => deadLetters.push(reason) },
    );
    const a = await queue.add("capture", { tenant: "acme", orderId: "o-4", amountCents: 100 }, { attempts: 3 });
    await waitFor("the first message", () => finished(queue, a.id!));
    const b = await queue.add("capture", { tenant: "acme", orderId: "o-4", amountCents: 200 }, { attempts: 3 });
    const job = await waitFor("the reused key", () => finished(queue, b.id!));
    expect(await job.getState()).toBe("failed");
    expect(job.failedReason).toMatch(/dead-lettered \(EFFECT_KEY_REUSE\).*different payload/);
    expect(job.attemptsMade).toBe(1);
    expect(runs).toBe(1);
    expect(deadLetters).toHaveLength(1);
  });
});
