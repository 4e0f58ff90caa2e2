import { spawn } from "node:child_process";
import path from "node:path";
import type pg from "pg";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Scope } from "../../lib/auth/scope";
import { getEffect } from "../../lib/features/keys-and-effects/get-effect";
import { getViolationGroups } from "../../lib/features/violations/get-violation-groups";
import { listViolations } from "../../lib/features/violations/list-violations";
import { createEffects } from "../../lib/idempotency";
import { maintain } from "../../lib/idempotency/admin";
import { metricValue, silentLogger } from "../../lib/idempotency/test/helpers";
import { createTestDatabase, type TestDatabase } from "../database";

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 10 });
  await db.pool.query("CREATE TABLE ledger (order_id text CONSTRAINT ledger_order_id_key UNIQUE)");
});
afterAll(async () => {
  await db?.drop();
});

const writeTwice = (key: string) => () => db.pool.query("INSERT INTO ledger (order_id) VALUES ($1), ($1)", [key]);
const recorded = async (where: string, values: unknown[]) =>
  (
    await db.pool.query<{ tenant_id: string; key: string; job_type: string; constraint_name: string; message_id: string | null }>(
      `SELECT tenant_id, key, job_type, constraint_name, message_id FROM uncaught_violation_keys WHERE ${where} ORDER BY key`,
      values,
    )
  ).rows;

describe("uncaught violations, one row per affected key", () => {
  it("N violations on N keys within one minute: N rows at once, each on its own key's detail only", async () => {
    const registry = new Registry();
    // Rollups on, never flushed: the rows must not wait for a flush.
    const effects = createEffects({ db: db.pool, registry, logger: silentLogger(), flushInterval: 0, register: false });
    const keys = Array.from({ length: 12 }, (_, i) => `mark-paid:ord-n${String(i).padStart(2, "0")}`);
    for (const [i, key] of keys.entries()) {
      await expect(
        effects.once({ tenant: "acme", key, jobType: "mark-paid", messageId: `msg-n${i}` }, writeTwice(key)),
      ).rejects.toMatchObject({ code: "23505", constraint: "ledger_order_id_key" });
    }
    // The same key in another tenant: never on acme's page.
    await expect(
      effects.once({ tenant: "globex", key: keys[0]!, jobType: "mark-paid", messageId: "msg-globex" }, writeTwice("globex-0")),
    ).rejects.toMatchObject({ code: "23505" });

    expect(await recorded("tenant_id = 'acme' AND key LIKE 'mark-paid:ord-n%'", [])).toEqual(
      keys.map((key, i) => ({
        tenant_id: "acme",
        key,
        job_type: "mark-paid",
        constraint_name: "ledger_order_id_key",
        message_id: `msg-n${i}`,
      })),
    );
    expect(
      await metricValue(registry, "idem_unique_violations_uncaught_total", {
        job_type: "mark-paid",
        constraint: "ledger_order_id_key",
      }),
    ).toBe(13);

    const list = await listViolations(
      Scope.operator(),
      { tenant: "acme", constraint: "ledger_order_id_key", limit: 100 },
      db.pool,
    );
    expect(list.violations.map((v) => v.key).sort()).toEqual(keys);
    for (const [i, key] of keys.entries()) {
      const detail = await getEffect(Scope.operator(), { tenant: "acme", key }, db.pool);
      expect(
        detail?.violations.map((v) => [v.tenant, v.key, v.messageId]),
        key,
      ).toEqual([["acme", key, `msg-n${i}`]]);
    }
    const globex = await getEffect(Scope.operator(), { tenant: "globex", key: keys[0]! }, db.pool);
    expect(globex?.violations.map((v) => v.messageId)).toEqual(["msg-globex"]);

    const now = Date.now();
    const groups = await getViolationGroups(
      Scope.operator(),
      { from: new Date(now - 3_600_000), to: new Date(now + 60_000) },
      db.pool,
    );
    expect(groups.map((g) => [g.tenant, g.constraint, g.count, g.keys])).toEqual([
      ["acme", "ledger_order_id_key", 12, 12],
      ["globex", "ledger_order_id_key", 1, 1],
    ]);
    await effects.close();
  });

  it("records a transactional step's violation although its transaction rolled back", async () => {
    const effects = createEffects({
      db: db.pool,
      registry: new Registry(),
      logger: silentLogger(),
      rollups: false,
      register: false,
    });
    const key = "mark-paid:ord-tx";
    await expect(
      effects.once({ tenant: "acme", key, jobType: "mark-paid", policy: "transactional" }, (_claim, tx) =>
        (tx as pg.PoolClient).query("INSERT INTO ledger (order_id) VALUES ($1), ($1)", [key]),
      ),
    ).rejects.toMatchObject({ code: "23505" });
    expect((await recorded("key = $1", [key])).map((r) => r.constraint_name)).toEqual(["ledger_order_id_key"]);
    await effects.close();
  });

  it("a failed insert of the row is logged and counted, and the handler's violation is still what is thrown", async () => {
    const pool = db.pool;
    const failing = Object.create(pool) as pg.Pool;
    (failing as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const first = args[0] as { text?: string } | string;
      const text = typeof first === "string" ? first : (first.text ?? "");
      if (text.includes("uncaught_violation_keys")) return Promise.reject(new Error("database went away"));
      return (pool.query as (...a: unknown[]) => unknown)(...args);
    };
    const registry = new Registry();
    const effects = createEffects({ db: failing, registry, logger: silentLogger(), rollups: false, register: false });
    const key = "mark-paid:ord-unrecorded";
    await expect(effects.once({ tenant: "acme", key, jobType: "mark-paid" }, writeTwice(key))).rejects.toMatchObject({
      code: "23505",
      constraint: "ledger_order_id_key",
    });
    expect(await metricValue(registry, "idem_violation_record_failures_total", {})).toBe(1);
    expect(await recorded("key = $1", [key])).toEqual([]);
    await effects.close();
  });

  it("a worker SIGKILLed right after a violation has lost none of it", async () => {
    const key = "mark-paid:ord-killed";
    const worker = path.join(import.meta.dirname, "violation-worker.ts");
    const signal = await new Promise<NodeJS.Signals | null>((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", "tsx", worker], {
        cwd: path.resolve(import.meta.dirname, "../.."),
        env: { ...process.env, VIOLATION_DATABASE_URL: db.sqlUrl, VIOLATION_KEY: key },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      child.stdout.on("data", (chunk) => {
        output += chunk;
      });
      child.stderr.on("data", (chunk) => {
        output += chunk;
      });
      child.on("error", reject);
      child.on("exit", (_code, s) => (s === "SIGKILL" ? resolve(s) : reject(new Error(`worker was not killed: ${output}`))));
    });
    expect(signal).toBe("SIGKILL");
    expect(await recorded("key = $1", [key])).toEqual([
      { tenant_id: "acme", key, job_type: "mark-paid-killed", constraint_name: "ledger_order_id_key", message_id: `msg-${key}` },
    ]);
    // The per-minute rollup, held in the dead worker's memory, never got it: the row is the record.
    const rollup = await db.pool.query("SELECT 1 FROM worker_stats_minute WHERE job_type = 'mark-paid-killed'");
    expect(rollup.rowCount).toBe(0);
  });

  it("maintenance prunes rows older than the effects it keeps", async () => {
    await db.pool.query(
      `INSERT INTO uncaught_violation_keys (occurred_at, tenant_id, job_type, constraint_name, key)
       VALUES (now() - interval '400 days', 'acme', 'mark-paid', 'ledger_order_id_key', 'mark-paid:ord-ancient')`,
    );
    const run = await maintain(db.pool, { logger: silentLogger() });
    expect(run.operations).toContainEqual(expect.objectContaining({ kind: "prune", partition: "uncaught_violation_keys" }));
    expect(await recorded("key = $1", ["mark-paid:ord-ancient"])).toEqual([]);
    expect((await recorded("key = $1", ["mark-paid:ord-killed"])).length).toBe(1);
  });
});
