import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { classifyDatabaseError, maintain } from "../admin";
import { EffectsDatabaseError } from "../errors";
import { classifyError } from "../index";
import { PG_ERROR_CLASSES } from "../pg-errors";
import { isRetryable } from "../retryable";
import { startFatalProxy } from "./fatal-proxy";
import { PROVIDER_DDL, silentLogger, sleep, testEffects } from "./helpers";

/** The worker never dies of, nor misreports, a connection cut by the server. */

let db: TestDatabase;
let n = 0;
const uniq = (prefix: string) => `${prefix}-${++n}-${Math.random().toString(36).slice(2, 7)}`;

beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 4 });
  await db.pool.query(PROVIDER_DDL);
});
afterAll(async () => {
  await db?.drop();
});

async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (await condition()) return;
    await sleep(5);
  }
  throw new Error("condition not met");
}

async function newOrder() {
  const id = uniq("order");
  await db.pool.query("INSERT INTO orders (id) VALUES ($1)", [id]);
  return {
    id,
    paidCount: async () =>
      (await db.pool.query("SELECT paid_count FROM orders WHERE id = $1", [id])).rows[0].paid_count as number,
  };
}

/**
 * A pool of one connection through a FatalProxy. Without a listener on the client it is handed
 * to, the FATAL is an 'error' event nobody hears: an uncaught exception that kills the process.
 * `uncaught` records those, so the test fails, not only the run.
 */
async function oneConnectionBehindFatalProxy() {
  const target = new URL(db.sqlUrl);
  const proxy = await startFatalProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const viaProxy = new URL(db.sqlUrl);
  viaProxy.hostname = "127.0.0.1";
  viaProxy.port = String(proxy.port);
  const pool = new pg.Pool({ connectionString: viaProxy.toString(), max: 1 });
  pool.on("error", () => {});
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  process.on("uncaughtException", onUncaught);
  return {
    proxy,
    pool,
    uncaught,
    async close() {
      process.off("uncaughtException", onUncaught);
      await pool.end();
      await proxy.close();
    },
  };
}

describe("item 1: a FATAL behind the reply that frees the only connection", () => {
  it("is heard by the transactional step the client is handed to; the step is retried and runs once", async () => {
    const { proxy, pool, uncaught, close } = await oneConnectionBehindFatalProxy();
    const effects = testEffects(pool);
    try {
      await pool.query("SELECT 1");
      const order = await newOrder();
      const held = proxy.arm();
      // pool.query releases its client synchronously, inside the parse of the reply's socket read.
      const freeing = pool.query("SELECT 'frees the client' AS x");
      await held;
      let runs = 0;
      const step = effects.job({ tenant: "acme", jobType: "order.paid" }, (job) =>
        job.transaction(`mark-paid:${order.id}`, async (tx) => {
          runs++;
          await tx.query("UPDATE orders SET paid_count = paid_count + 1 WHERE id = $1", [order.id]);
          return { paid: true };
        }),
      );
      // The step waits for the only connection; now the reply and the FATAL arrive in one read.
      await until(() => pool.waitingCount === 1);
      proxy.release();
      expect((await freeing).rows[0].x).toBe("frees the client");
      const result = await step;
      expect(result.value).toEqual({ paid: true });
      expect(runs).toBe(1);
      expect(await order.paidCount()).toBe(1);
      expect(proxy.connections()).toBeGreaterThanOrEqual(2);
      expect(uncaught).toEqual([]);
    } finally {
      await effects.close();
      await close();
    }
  });

  it("is heard by a maintenance run the client is handed to: the run fails, the process lives", async () => {
    const { proxy, pool, uncaught, close } = await oneConnectionBehindFatalProxy();
    try {
      await pool.query("SELECT 1");
      const held = proxy.arm();
      const freeing = pool.query("SELECT 'frees the client' AS x");
      await held;
      const run = maintain(pool, { logger: silentLogger() });
      await until(() => pool.waitingCount === 1);
      proxy.release();
      expect((await freeing).rows[0].x).toBe("frees the client");
      expect((await run).result).toBe("failed");
      expect(uncaught).toEqual([]);
    } finally {
      await close();
    }
  });
});

describe("item 2: connection-level errors are transient", () => {
  it("are in the one table, retried, and classified as database errors, never the handler's", () => {
    for (const error of [
      new Error("Client has encountered a connection error and is not queryable"),
      new Error("Client was closed and is not queryable"),
      new Error("Connection terminated unexpectedly"),
      Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
      Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }),
      Object.assign(new Error("the database system is starting up"), { code: "57P03" }),
      Object.assign(new Error("connection failure"), { code: "08006" }),
    ]) {
      expect(isRetryable(error), error.message).toBe(true);
      expect(classifyDatabaseError(error)?.kind).toBe("connection");
      expect(classifyError(error), error.message).toMatchObject({ kind: "database", disposition: "retry" });
    }
    expect(classifyError(new Error("boom"))).toEqual({ kind: "handler" });
    expect(classifyError(Object.assign(new Error("dup"), { code: "23505" }))).toEqual({ kind: "handler" });
    expect(PG_ERROR_CLASSES["57P01"]).toMatchObject({ transient: true, kind: "connection" });
    expect(PG_ERROR_CLASSES["08"]).toMatchObject({ transient: true });
    expect(PG_ERROR_CLASSES["23"]).toBeUndefined();
    // "EPIPE" looks like a SQLSTATE; the table knows it is a socket error.
    expect(classifyDatabaseError({ code: "EPIPE" })?.kind).toBe("connection");
  });

  it("under a storm of terminations: every effect once, and no error the handler did not throw is reported as the handler's", async () => {
    const pool = new pg.Pool({ connectionString: db.sqlUrl, max: 4, application_name: "onceboard-storm" });
    pool.on("error", () => {});
    const effects = testEffects(pool, { wait: "2s" });
    const orders = await Promise.all(Array.from({ length: 24 }, () => newOrder()));
    let storming = true;
    let terminated = 0;
    // 60 rounds, one every 20 ms: long enough to cut many steps mid-transaction, finite so they finish.
    const storm = (async () => {
      for (let round = 0; round < 60 && storming; round++) {
        const { rows } = await db.pool.query<{ n: number }>(
          "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = 'onceboard-storm'",
        );
        terminated += rows[0]?.n ?? 0;
        await sleep(20);
      }
    })();
    const kinds: string[] = [];
    const handlerErrors: unknown[] = [];
    try {
      await Promise.all(
        orders.map(async (order) => {
          for (let delivery = 0; delivery < 500; delivery++) {
            try {
              await effects.job({ tenant: "acme", jobType: "order.paid" }, async (job) => {
                await job.transaction(`mark-paid:${order.id}`, async (tx) => {
                  await tx.query("UPDATE orders SET paid_count = paid_count + 1 WHERE id = $1", [order.id]);
                  await tx.query("SELECT pg_sleep(0.01)");
                });
                await job.external(`notify:${order.id}`, () => "sent");
              });
              return;
            } catch (error) {
              const kind = classifyError(error);
              kinds.push(kind.kind);
              if (kind.kind === "handler") handlerErrors.push(error);
              await sleep(10);
            }
          }
          throw new Error(`order ${order.id} never completed`);
        }),
      );
    } finally {
      storming = false;
      await storm;
      await effects.close();
      await pool.end();
    }
    expect(terminated).toBeGreaterThan(0);
    expect(handlerErrors.map((e) => String(e))).toEqual([]);
    for (const order of orders) expect(await order.paidCount()).toBe(1);
    // The storm really hit: at least some deliveries failed and were redelivered, or were retried inside.
    expect(kinds.every((k) => k === "database" || k === "library" || k === "in_flight")).toBe(true);
  });

  it("reports a library-owned transaction that cannot reach the database as EffectsDatabaseError (retry)", async () => {
    const pool = new pg.Pool({ connectionString: "postgresql://postgres@127.0.0.1:1/none", max: 1 });
    pool.on("error", () => {});
    const effects = testEffects(pool);
    const error = await effects
      .job({ tenant: "acme", jobType: "j" }, (job) => job.transaction("a:b", () => 1))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EffectsDatabaseError);
    expect(classifyError(error)).toMatchObject({ kind: "database", disposition: "retry" });
    await effects.close();
    await pool.end();
  });
});
