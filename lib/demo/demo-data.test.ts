import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { backfillHistory, isDatabaseEmpty } from "./history";
import { FakeMailer, FakePaymentProvider } from "./provider";
import { DemoRunningError, resetDemo } from "./reset";
import { parseSpan } from "./settings";
import { formatReport, verifyDemo } from "./verify";

const ROOT = path.resolve(import.meta.dirname, "../..");
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

async function withClient<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

describe("fake provider and mailer", () => {
  it("the provider honours idempotency keys (one charge, replays counted); the mailer does not dedupe", async () => {
    const provider = new FakePaymentProvider(db.pool);
    const calls = await Promise.all(
      Array.from({ length: 10 }, () =>
        provider.capture({ tenant: "acme", orderId: "p-1", amountCents: 10, idempotencyKey: "k-p-1" }),
      ),
    );
    expect(new Set(calls.map((c) => c.chargeId)).size).toBe(1);
    expect(calls.filter((c) => !c.replayed)).toHaveLength(1);
    const noKey = [
      await provider.capture({ tenant: "acme", orderId: "p-2", amountCents: 10 }),
      await provider.capture({ tenant: "acme", orderId: "p-2", amountCents: 10 }),
    ];
    expect(noKey[0]?.chargeId).not.toBe(noKey[1]?.chargeId);
    const mailer = new FakeMailer(db.pool);
    await mailer.send({ tenant: "acme", orderId: "p-1", recipient: "a@b.example", subject: "x" });
    await mailer.send({ tenant: "acme", orderId: "p-1", recipient: "a@b.example", subject: "x" });
    const { rows } = await db.pool.query("SELECT 1 FROM demo_mailer_outbox WHERE order_id = 'p-1'");
    expect(rows).toHaveLength(2);
    await db.pool.query("TRUNCATE demo_provider_ledger, demo_mailer_outbox");
  });
});

describe("demo:verify", () => {
  it("reports a double capture and a lost order (the check can fail), and passes a clean run", async () => {
    await db.pool.query(
      `INSERT INTO demo_orders (tenant_id, order_id, amount_cents, status, paid_at, created_at) VALUES
         ('acme', 'v-1', 100, 'paid', now(), now() - interval '10 minutes'),
         ('acme', 'v-2', 100, 'pending', NULL, now() - interval '10 minutes'),
         ('globex', 'v-3', 100, 'paid', now(), now() - interval '10 minutes')`,
    );
    await db.pool.query(
      `INSERT INTO demo_provider_ledger (tenant_id, order_id, kind, idempotency_key, charge_id, amount_cents) VALUES
         ('acme', 'v-1', 'capture', 'k1', 'c1', 100), ('acme', 'v-1', 'capture', 'k1-other', 'c2', 100),
         ('globex', 'v-3', 'capture', 'k3', 'c3', 100)`,
    );
    const bad = await verifyDemo(db.pool);
    expect(bad.ok).toBe(false);
    expect(bad.totals).toMatchObject({ orders: 3, captures: 3, paid: 2, doubleCaptures: 1, lost: 1 });
    expect(formatReport(bad).at(-1)).toBe("demo orders=3 captures=3 double_captures=1 lost=1");

    await db.pool.query("DELETE FROM demo_provider_ledger WHERE charge_id = 'c2'");
    await db.pool.query("DELETE FROM demo_orders WHERE order_id = 'v-2'");
    const good = await verifyDemo(db.pool);
    expect(good.ok).toBe(true);
    expect(formatReport(good)).toEqual([
      expect.stringMatching(/^tenant acme .*orders=1 captures=1 paid=1 receipts=0 double_captures=0/),
      expect.stringMatching(/^tenant globex .*orders=1/),
      "demo orders=2 captures=2 double_captures=0 lost=0",
    ]);
    await db.pool.query("TRUNCATE demo_orders, demo_provider_ledger");
  });
});

describe("history backfill and demo:reset", () => {
  it("backfills days of demo effects and rollups (gap buckets, an outage hole, violations), and reset removes exactly the demo data", async () => {
    // Real data the reset must leave alone.
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, created_at) VALUES ('real', 'capture:r-1', 'billing', 'completed', 'once', now())`,
    );
    await db.pool.query(
      `INSERT INTO worker_stats_minute (minute, job_type, claims, demo) VALUES (date_trunc('minute', now()) - interval '1 hour', 'billing', 5, false)`,
    );
    expect(await isDatabaseEmpty(db.pool)).toBe(false);

    const progress: string[] = [];
    const result = await withClient((client) =>
      backfillHistory(client, { spanMs: 3 * 86_400_000, ordersPerDay: 50, onProgress: (l) => progress.push(l) }),
    );
    expect(result.days).toBe(3);
    expect(progress).toHaveLength(3);
    expect(progress[2]).toMatch(/^history: day 3\/3 /);
    expect(result.effects).toBeGreaterThan(300);

    const effects = await db.pool.query<{ n: number; oldest: Date; dups: number }>(
      "SELECT count(*)::int AS n, min(created_at) AS oldest, count(*) FILTER (WHERE duplicate_count > 0)::int AS dups FROM effects WHERE demo",
    );
    expect(effects.rows[0]?.n).toBe(result.effects);
    expect(effects.rows[0]!.oldest.getTime()).toBeLessThan(Date.now() - 2.9 * 86_400_000);
    expect(effects.rows[0]?.dups).toBeGreaterThan(0);

    const rollups = await db.pool.query<{ rows: number; minutes: number; suppressed: number; bucketed: number; buckets: number }>(
      `SELECT count(*)::int AS rows, count(DISTINCT minute)::int AS minutes, sum(suppressed)::int AS suppressed,
              sum((SELECT sum(b) FROM unnest(gap_buckets) AS b))::int AS bucketed, max(array_length(gap_buckets, 1)) AS buckets
         FROM worker_stats_minute WHERE demo`,
    );
    const r = rollups.rows[0]!;
    expect(r.rows).toBe(result.rollupRows);
    expect(r.suppressed).toBeGreaterThan(0);
    expect(r.bucketed).toBe(r.suppressed);
    expect(r.buckets).toBe(16);
    // A 25-minute outage: fewer distinct minutes than the span holds.
    expect(r.minutes).toBeLessThan(3 * 1440 - 20);
    const violations = await db.pool.query("SELECT 1 FROM uncaught_violations_minute WHERE demo");
    expect(violations.rowCount).toBeGreaterThan(0);

    await db.pool.query("INSERT INTO demo_orders (tenant_id, order_id, amount_cents) VALUES ('acme', 'r-1', 1)");

    // Refused while a demo process is connected.
    const demoConn = new pg.Client({ connectionString: db.url, application_name: "onceboard-demo-worker-9" });
    await demoConn.connect();
    await expect(withClient((client) => resetDemo(client))).rejects.toBeInstanceOf(DemoRunningError);
    await demoConn.end();

    const reset = await withClient((client) => resetDemo(client));
    expect(reset.effects).toBe(result.effects);
    expect(reset.orders).toBe(1);
    const left = await db.pool.query<{
      effects: number;
      demo_effects: number;
      stats: number;
      demo_stats: number;
      demo_schema: boolean;
    }>(
      `SELECT (SELECT count(*) FROM effects)::int AS effects, (SELECT count(*) FROM effects WHERE demo)::int AS demo_effects,
              (SELECT count(*) FROM worker_stats_minute)::int AS stats, (SELECT count(*) FROM worker_stats_minute WHERE demo)::int AS demo_stats,
              EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'onceboard_demo') AS demo_schema`,
    );
    // The demo's tables go with their schema; the demo makes it again when it starts.
    expect(left.rows[0]).toEqual({ effects: 1, demo_effects: 0, stats: 1, demo_stats: 0, demo_schema: false });
  });
});

describe("command-line input", () => {
  const run = promisify(execFile);
  async function fails(args: string[]) {
    try {
      await run(process.execPath, ["--import", "tsx", ...args], { cwd: ROOT, env: { ...process.env, DATABASE_URL: db.url } });
    } catch (error) {
      const e = error as { code: number; stderr: string };
      return { code: e.code, stderr: e.stderr };
    }
    throw new Error(`${args.join(" ")} succeeded`);
  }

  it("parseSpan accepts 14d / 36h / 90m and rejects anything else with a clear message", () => {
    expect(parseSpan("14d", "--history")).toBe(14 * 86_400_000);
    expect(parseSpan("36h", "--history")).toBe(36 * 3_600_000);
    expect(() => parseSpan("banana", "--history")).toThrow(/--history must look like 14d, 36h or 90m \(got "banana"\)/);
    expect(() => parseSpan("0d", "--history")).toThrow(/between 1m and 90d/);
  });

  it("`npm start -- --history banana` and `demo:verify -- --grace banana` fail with one line and a non-zero exit", async () => {
    const start = await fails(["scripts/start.ts", "--history", "banana"]);
    expect(start.code).not.toBe(0);
    expect(start.stderr.trim().split("\n")).toEqual(['onceboard: --history must look like 14d, 36h or 90m (got "banana")']);
    const verify = await fails(["scripts/demo-verify.ts", "--grace", "banana"]);
    expect(verify.code).not.toBe(0);
    expect(verify.stderr.trim().split("\n")[0]).toMatch(/--grace must be a whole number of seconds/);
  });
});
