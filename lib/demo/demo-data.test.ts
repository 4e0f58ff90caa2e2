import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { Scope } from "../auth/scope";
import type { OverviewResponse } from "../features/overview/contract";
import { overviewQuery } from "../features/overview/contract";
import { getOverviewSeries } from "../features/overview/get-overview-series";
import { PostgresSource } from "../features/overview/metrics/postgres-source";
import { Rollups } from "../idempotency/rollups";
import { silentLogger } from "../idempotency/test/helpers";
import { backfillHistory, HISTORY_OUTAGE, historyReadyLine, isDatabaseEmpty } from "./history";
import { installDemoProviderSchema } from "./provider";
import { DemoRunningError, resetDemo } from "./reset";
import { parseSpan } from "./settings";
import { PROVIDER_SCHEMA, seedProviderObjects } from "./stripe-storage";
import { formatReport, verifyDemo } from "./verify";

const ROOT = path.resolve(import.meta.dirname, "../..");
let db: TestDatabase;
// The demo names its tables and the library's unqualified: it connects as npm start connects it.
let demo: pg.Pool;

beforeAll(async () => {
  db = await createTestDatabase();
  demo = new pg.Pool({ connectionString: db.sqlUrl, max: 10 });
  // pool.end() can resolve before every socket has closed: the drop's FORCE then cuts one (57P01),
  // an 'error' on the pool that would otherwise be an uncaught exception of this file.
  demo.on("error", () => {});
  await installDemoProviderSchema(demo);
});
afterAll(async () => {
  await demo.end();
  await db.drop();
});

async function withClient<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: db.sqlUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

describe("demo:verify", () => {
  it("reports a double capture and a lost order (the check can fail), and passes a clean run", async () => {
    await demo.query(
      `INSERT INTO demo_orders (tenant_id, order_id, amount_cents, status, paid_at, created_at) VALUES
         ('acme', 'v-1', 100, 'paid', now(), now() - interval '10 minutes'),
         ('acme', 'v-2', 100, 'pending', NULL, now() - interval '10 minutes'),
         ('globex', 'v-3', 100, 'paid', now(), now() - interval '10 minutes')`,
    );
    // The provider's own storage: two PaymentIntents carry v-1's capture key, one v-3's.
    const capture = (tenant: string, order: string) => ({ onceboard_key: `capture:${order}`, onceboard_tenant: tenant });
    const now = Math.floor(Date.now() / 1000);
    await seedProviderObjects(demo, [
      { id: "pi_c1", amount: 100, created: now, metadata: capture("acme", "v-1") },
      { id: "pi_c2", amount: 100, created: now, metadata: capture("acme", "v-1") },
      { id: "pi_c3", amount: 100, created: now, metadata: capture("globex", "v-3") },
    ]);
    const bad = await verifyDemo(demo);
    expect(bad.ok).toBe(false);
    expect(bad.totals).toMatchObject({ orders: 3, captures: 3, paid: 2, doubleCaptures: 1, lost: 1 });
    expect(formatReport(bad).at(-1)).toBe("demo orders=3 captures=3 double_captures=1 lost=1");

    // A second PaymentIntent the provider planted itself is the reconciliation's to find, not the shop's double capture.
    await demo.query(
      `INSERT INTO ${PROVIDER_SCHEMA}.injections (disagreement, object_id, onceboard_key, onceboard_tenant) VALUES ('duplicate', 'pi_c2', 'capture:v-1', 'acme')`,
    );
    await demo.query("DELETE FROM demo_orders WHERE order_id = 'v-2'");
    const good = await verifyDemo(demo);
    expect(good.ok).toBe(true);
    expect(formatReport(good)).toEqual([
      expect.stringMatching(
        /^tenant acme .*orders=1 captures=2 paid=1 receipts=0 double_captures=0 .*provider_duplicates=1 lost=0$/,
      ),
      expect.stringMatching(/^tenant globex .*orders=1/),
      "demo orders=2 captures=3 double_captures=0 lost=0",
    ]);
    await demo.query(
      `TRUNCATE demo_orders, ${PROVIDER_SCHEMA}.objects, ${PROVIDER_SCHEMA}.injections, ${PROVIDER_SCHEMA}.planted_keys`,
    );
  });
});

/**
 * Every number the Overview shows for the history agrees with the effect rows it wrote.
 * The rollups count claims as the worker library does: an effect's first claim, each suppressed
 * duplicate, each takeover, each abandoned redelivery, each in-flight duplicate and each reused key.
 */
async function expectHistoryAgrees(now: Date, real: OverviewResponse) {
  const { rows: perType } = await demo.query<{
    job_type: string;
    effects: number;
    duplicates: number;
    takeovers: number;
    abandoned: number;
    claims: number | null;
    suppressed: number | null;
    in_flight: number | null;
    rollup_takeovers: number | null;
    rollup_abandoned: number | null;
    key_reuse: number | null;
    deliveries: number | null;
    redeliveries: number | null;
    gap_samples: number | null;
  }>(
    `WITH e AS (
       SELECT job_type, count(*)::int AS effects, sum(duplicate_count)::int AS duplicates,
              count(*) FILTER (WHERE attempt = 2 AND status <> 'abandoned')::int AS takeovers,
              count(*) FILTER (WHERE status = 'abandoned')::int AS abandoned
         FROM effects WHERE marked GROUP BY 1
     ), w AS (
       SELECT job_type, sum(claims)::int AS claims, sum(suppressed)::int AS suppressed, sum(in_flight)::int AS in_flight,
              sum(takeovers)::int AS rollup_takeovers, sum(abandoned)::int AS rollup_abandoned, sum(key_reuse)::int AS key_reuse,
              sum(deliveries)::int AS deliveries, sum(redeliveries)::int AS redeliveries,
              sum((SELECT sum(b) FROM unnest(gap_buckets) AS b))::int AS gap_samples
         FROM worker_stats_minute WHERE marked GROUP BY 1
     )
     SELECT * FROM e FULL JOIN w USING (job_type) ORDER BY job_type`,
  );
  // Only job types the history wrote effects for, and each of them counted.
  expect(perType.map((t) => [t.job_type, t.effects > 0, t.claims !== null])).toEqual(
    ["order.capture", "order.mark_paid", "order.paid", "order.receipt"].map((j) => [j, true, true]),
  );
  for (const t of perType) {
    const claims = t.claims ?? 0;
    const firstClaims =
      claims -
      (t.suppressed ?? 0) -
      (t.in_flight ?? 0) -
      (t.rollup_takeovers ?? 0) -
      (t.rollup_abandoned ?? 0) -
      (t.key_reuse ?? 0);
    expect({
      jobType: t.job_type,
      firstClaims,
      suppressed: t.suppressed,
      takeovers: t.rollup_takeovers,
      abandoned: t.rollup_abandoned,
    }).toEqual({
      jobType: t.job_type,
      firstClaims: t.effects,
      suppressed: t.duplicates,
      takeovers: t.takeovers,
      abandoned: t.abandoned,
    });
    expect(t.gap_samples).toBe(t.duplicates);
    expect(t.deliveries).toBe(claims);
    expect(t.redeliveries).toBe((t.suppressed ?? 0) + (t.in_flight ?? 0) + (t.rollup_takeovers ?? 0) + (t.rollup_abandoned ?? 0));
  }

  // Latency samples: one per claim.
  const latency = await demo.query<{ samples: number; claims: number }>(
    `SELECT (SELECT sum((SELECT sum(b) FROM unnest(buckets) AS b)) FROM claim_latency_minute WHERE marked)::int AS samples,
            (SELECT sum(claims) FROM worker_stats_minute WHERE marked)::int AS claims`,
  );
  expect(latency.rows[0]?.samples).toBe(latency.rows[0]?.claims);

  // Per tenant: the hourly suppressions are the effects' duplicates, tenant by tenant and job type by job type.
  const tenants = await demo.query<{ tenant_id: string; job_type: string; rolled: number | null; duplicates: number | null }>(
    `SELECT tenant_id, job_type, r.n AS rolled, e.n AS duplicates
       FROM (SELECT tenant_id, job_type, sum(count)::int AS n FROM tenant_suppressions_hour WHERE marked GROUP BY 1, 2) r
       FULL JOIN (SELECT tenant_id, job_type, sum(duplicate_count)::int AS n FROM effects WHERE marked AND duplicate_count > 0 GROUP BY 1, 2) e
       USING (tenant_id, job_type) ORDER BY 1, 2`,
  );
  expect(tenants.rows.length).toBeGreaterThan(0);
  for (const t of tenants.rows) expect(t.rolled, `${t.tenant_id} ${t.job_type}`).toBe(t.duplicates);

  // Uncaught violations: the same count per job type in the minute rollups, the tenants' hours and
  // the violation rows (one per violation), and every key the Violations page links to is an
  // effect the history wrote.
  const violations = await demo.query<{
    job_type: string;
    stats: number;
    minutes: number;
    tenants: number;
    rows: number;
    unknown_keys: number;
  }>(
    `SELECT job_type,
            (SELECT sum(uncaught_violations) FROM worker_stats_minute w WHERE w.marked AND w.job_type = j.job_type)::int AS stats,
            (SELECT sum(count) FROM uncaught_violations_minute u WHERE u.marked AND u.job_type = j.job_type)::int AS minutes,
            (SELECT sum(count) FROM tenant_violations_hour t WHERE t.marked AND t.job_type = j.job_type)::int AS tenants,
            (SELECT count(*) FROM uncaught_violation_keys k WHERE k.marked AND k.job_type = j.job_type)::int AS rows,
            (SELECT count(*) FROM uncaught_violation_keys k WHERE k.marked AND k.job_type = j.job_type
                AND NOT EXISTS (SELECT 1 FROM effects e WHERE e.marked AND e.key = k.key AND e.tenant_id = k.tenant_id))::int AS unknown_keys
       FROM (SELECT DISTINCT job_type FROM uncaught_violations_minute WHERE marked) j ORDER BY 1`,
  );
  expect(violations.rows.length).toBeGreaterThan(0);
  for (const v of violations.rows)
    expect(v).toEqual({
      job_type: v.job_type,
      stats: v.minutes,
      minutes: v.minutes,
      tenants: v.minutes,
      rows: v.minutes,
      unknown_keys: 0,
    });

  // And as the Overview reads them (hourly tables for a week), on top of the real rows' counts:
  // suppressions by job type and by tenant add up alike.
  const overview = await readOverview("7d", now);
  const duplicates = await demo.query<{ job_type: string; n: number }>(
    "SELECT job_type, sum(duplicate_count)::int AS n FROM effects WHERE marked GROUP BY 1",
  );
  const suppressionsOf = (o: OverviewResponse, jobType: string) =>
    o.jobTypes.find((j) => j.jobType === jobType)?.suppressions ?? 0;
  for (const d of duplicates.rows) expect(suppressionsOf(overview, d.job_type) - suppressionsOf(real, d.job_type)).toBe(d.n);
  expect(overview.topTenants.reduce((a, t) => a + t.suppressions, 0)).toBe(overview.totals.suppressions);
}

const readOverview = (window: "1h" | "24h" | "7d", now: Date) =>
  getOverviewSeries(Scope.operator(), overviewQuery.parse({ window }), {
    db: demo,
    source: new PostgresSource(demo),
    now,
  });

/**
 * Every rollup level, source and derived: the minute tables the library writes, the per-tenant
 * hours, and the ten-minute, hourly, six-hour and daily sums the triggers keep of them (worker_gaps_day: of
 * worker_stats_hour).
 */
const ROLLUP_TABLES = [
  "claim_latency_10m",
  "claim_latency_6h",
  "claim_latency_hour",
  "claim_latency_minute",
  "tenant_suppressions_day",
  "tenant_suppressions_hour",
  "tenant_violations_hour",
  "uncaught_violations_minute",
  "worker_gaps_day",
  "worker_stats_10m",
  "worker_stats_6h",
  "worker_stats_hour",
  "worker_stats_minute",
];

/**
 * Every row of every rollup table, in key order. Float sums are rounded to 1e-6: a level that had
 * the demo's seconds added and subtracted keeps rounding residue, never a count.
 */
async function rollupRows(): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of ROLLUP_TABLES) {
    const { rows } = await demo.query(`SELECT * FROM ${table} ORDER BY 1, 2, 3`);
    out[table] = rows.map((r) =>
      Object.fromEntries(
        Object.entries(r).map(([k, v]) => [k, typeof v === "number" && !Number.isInteger(v) ? Math.round(v * 1e6) / 1e6 : v]),
      ),
    );
  }
  return out;
}

/**
 * Real rows the reset must leave alone, written by the library's own rollup writer (marked: false)
 * into the history's job type, tenant and hours, two hours before `now`: they share every coarser
 * bucket (ten minutes, hour, day) with the demo's counts.
 */
async function writeRealRollups(now: Date) {
  const at = Math.floor(now.getTime() / 60_000) * 60_000 - 2 * 3_600_000;
  const real = new Rollups(demo, { marked: false, logger: silentLogger(), now: () => at });
  real.addClaim("order.paid", 0.004);
  real.addClaim("order.paid", 0.02);
  real.add("order.paid", { claims: 1, suppressed: 1, deliveries: 3, redeliveries: 1 });
  real.observeGap("order.paid", 42);
  real.addTenantSuppression("acme", "order.paid");
  real.addViolation("order.paid", "real_orders_key", { tenant: "acme", key: "mark-paid:r-1", messageId: "r-msg-1" });
  real.addTenantViolation("acme", "order.paid", "real_orders_key", "mark-paid:r-1");
  expect(await real.flush()).toBe(true);
}

describe("history backfill and demo:reset", () => {
  it("backfills days of demo effects and rollups (gap buckets, an outage hole, violations), and reset removes exactly the demo data", async () => {
    // Real data the reset must leave alone.
    await demo.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, created_at) VALUES ('real', 'capture:r-1', 'billing', 'completed', 'once', now())`,
    );
    await demo.query(
      `INSERT INTO worker_stats_minute (minute, job_type, claims, marked) VALUES (date_trunc('minute', now()) - interval '1 hour', 'billing', 5, false)`,
    );
    expect(await isDatabaseEmpty(demo)).toBe(false);
    const now = new Date();
    await writeRealRollups(now);
    const realRows = await rollupRows();
    const realOverview = {
      "1h": await readOverview("1h", now),
      "24h": await readOverview("24h", now),
      "7d": await readOverview("7d", now),
    };
    expect(realOverview["7d"].totals.claims).toBe(5 + 3);

    const progress: string[] = [];
    const result = await withClient((client) =>
      backfillHistory(client, { spanMs: 3 * 86_400_000, ordersPerDay: 50, now, onProgress: (l) => progress.push(l) }),
    );
    expect(result.days).toBe(3);
    expect(progress).toHaveLength(3);
    expect(progress[2]).toMatch(/^history: day 3\/3 /);
    expect(result.effects).toBeGreaterThan(300);

    const effects = await demo.query<{ n: number; oldest: Date; dups: number }>(
      "SELECT count(*)::int AS n, min(created_at) AS oldest, count(*) FILTER (WHERE duplicate_count > 0)::int AS dups FROM effects WHERE marked",
    );
    expect(effects.rows[0]?.n).toBe(result.effects);
    expect(effects.rows[0]!.oldest.getTime()).toBeLessThan(Date.now() - 2.9 * 86_400_000);
    expect(effects.rows[0]?.dups).toBeGreaterThan(0);

    const rollups = await demo.query<{ rows: number; suppressed: number; bucketed: number; buckets: number }>(
      `SELECT count(*)::int AS rows, sum(suppressed)::int AS suppressed,
              sum((SELECT sum(b) FROM unnest(gap_buckets) AS b))::int AS bucketed, max(array_length(gap_buckets, 1)) AS buckets
         FROM worker_stats_minute WHERE marked`,
    );
    const r = rollups.rows[0]!;
    expect(r.rows).toBe(result.rollupRows);
    expect(r.suppressed).toBeGreaterThan(0);
    expect(r.bucketed).toBe(r.suppressed);
    expect(r.buckets).toBe(16);
    // The outage of day 2 (02:10-02:35 after its start): no effect, no rollup, no duplicate in it.
    const end = Math.floor(now.getTime() / 60_000) * 60_000 - 60_000;
    const outageFrom = new Date(end - 3 * 86_400_000 + 2 * 86_400_000 + HISTORY_OUTAGE.fromMs);
    const outageTo = new Date(end - 3 * 86_400_000 + 2 * 86_400_000 + HISTORY_OUTAGE.toMs);
    const inOutage = await demo.query<{ effects: number; duplicates: number; rollups: number; around: number }>(
      `SELECT (SELECT count(*) FROM effects WHERE marked AND created_at >= $1 AND created_at < $2)::int AS effects,
              (SELECT count(*) FROM effects WHERE marked AND last_duplicate_at >= $1 AND last_duplicate_at < $2)::int AS duplicates,
              (SELECT count(*) FROM worker_stats_minute WHERE marked AND minute >= $1 AND minute < $2)::int AS rollups,
              (SELECT count(*) FROM worker_stats_minute WHERE marked AND minute >= $1::timestamptz - interval '3 hours'
                  AND minute < $2::timestamptz + interval '3 hours')::int AS around`,
      [outageFrom, outageTo],
    );
    expect(inOutage.rows[0]).toEqual({ effects: 0, duplicates: 0, rollups: 0, around: expect.any(Number) });
    expect(inOutage.rows[0]?.around).toBeGreaterThan(0);
    const violations = await demo.query("SELECT 1 FROM uncaught_violations_minute WHERE marked");
    expect(violations.rowCount).toBeGreaterThan(0);

    await expectHistoryAgrees(now, realOverview["7d"]);
    expect((await readOverview("24h", now)).totals.claims).toBeGreaterThan(realOverview["24h"].totals.claims ?? 0);

    await demo.query("INSERT INTO demo_orders (tenant_id, order_id, amount_cents) VALUES ('acme', 'r-1', 1)");

    // Refused while a demo process is connected.
    const demoConn = new pg.Client({ connectionString: db.sqlUrl, application_name: "onceboard-demo-worker-9" });
    await demoConn.connect();
    await expect(withClient((client) => resetDemo(client))).rejects.toBeInstanceOf(DemoRunningError);
    await demoConn.end();

    const reset = await withClient((client) => resetDemo(client));
    expect(reset.effects).toBe(result.effects);
    expect(reset.orders).toBe(1);
    const left = await demo.query<{
      effects: number;
      demo_effects: number;
      stats: number;
      demo_stats: number;
      demo_schema: boolean;
    }>(
      `SELECT (SELECT count(*) FROM effects)::int AS effects, (SELECT count(*) FROM effects WHERE marked)::int AS demo_effects,
              (SELECT count(*) FROM worker_stats_minute)::int AS stats, (SELECT count(*) FROM worker_stats_minute WHERE marked)::int AS demo_stats,
              EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = 'onceboard_demo') AS demo_schema`,
    );
    // The demo's tables go with their schema; the demo makes it again when it starts.
    expect(left.rows[0]).toEqual({ effects: 1, demo_effects: 0, stats: 2, demo_stats: 0, demo_schema: false });

    // Every rollup level, minute to day, holds exactly the real rows again (no demo count,
    // no bucket the demo alone made), and the Overview reads what it read before the demo came.
    const tables = await demo.query<{ name: string }>(
      `SELECT table_name AS name FROM information_schema.tables
        WHERE table_schema = 'onceboard' AND table_name ~ '_(minute|10m|hour|6h|day)$' ORDER BY 1`,
    );
    expect(tables.rows.map((t) => t.name)).toEqual(ROLLUP_TABLES);
    expect(await rollupRows()).toEqual(realRows);
    const demoViolationRows = await db.pool.query("SELECT 1 FROM uncaught_violation_keys WHERE marked");
    expect(demoViolationRows.rowCount).toBe(0);
    for (const window of ["1h", "24h", "7d"] as const) expect(await readOverview(window, now)).toEqual(realOverview[window]);
  });

  it("keeps the effect rows of its recent days only; the days before are in the rollups and the violation rows at the same rate", async () => {
    const now = new Date();
    const result = await withClient((client) =>
      backfillHistory(client, { spanMs: 2 * 86_400_000, effectsSpanMs: 86_400_000, ordersPerDay: 80, now }),
    );
    expect(result).toMatchObject({ days: 2, effectDays: 1 });
    expect(historyReadyLine(result)).toMatch(/ over 2 days \(effect rows kept for the last 1 day\)$/);
    const end = Math.floor(now.getTime() / 60_000) * 60_000 - 60_000;
    const perDay = await demo.query<{ older: boolean; effects: number; claims: number; violations: number }>(
      `SELECT d.older,
              (SELECT count(*) FROM effects WHERE marked AND (created_at < $1) = d.older)::int AS effects,
              (SELECT sum(claims) FROM worker_stats_minute WHERE marked AND (minute < $1) = d.older)::int AS claims,
              (SELECT count(*) FROM uncaught_violation_keys WHERE marked AND (occurred_at < $1) = d.older)::int AS violations
         FROM (VALUES (true), (false)) AS d(older) ORDER BY d.older`,
      [new Date(end - 86_400_000)],
    );
    const [recent, older] = perDay.rows;
    expect(recent?.effects).toBe(result.effects);
    expect(older?.effects).toBe(0);
    // The older day is counted as densely as the recent one (the duplicates of one day land in the next: a factor, not equality).
    expect(older!.claims).toBeGreaterThan(recent!.claims * 0.7);
    expect(older!.claims).toBeLessThan(recent!.claims * 1.3);
    expect(older!.violations).toBeGreaterThan(0);
    await withClient((client) => resetDemo(client));
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

  it("the backfill's last line writes its counts as the pages do, with thousands separators", () => {
    expect(historyReadyLine({ days: 14, effectDays: 14, effects: 75_318, rollupRows: 1234, violationRows: 7 })).toBe(
      "history ready: 75,318 effects, 1,234 rollup rows over 14 days",
    );
    expect(historyReadyLine({ days: 14, effectDays: 4, effects: 2_073_600, rollupRows: 80_640, violationRows: 7 })).toBe(
      "history ready: 2,073,600 effects, 80,640 rollup rows over 14 days (effect rows kept for the last 4 days)",
    );
  });

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

  it("`--store` takes postgres or mariadb only, and the demo on MariaDB refuses a history backfill, each in one line before anything starts", async () => {
    const store = await fails(["scripts/start.ts", "--store", "oracle"]);
    expect(store.code).not.toBe(0);
    expect(store.stderr.trim().split("\n")).toEqual(['onceboard: --store must be postgres or mariadb (got "oracle")']);
    const history = await fails(["scripts/start.ts", "--demo", "--store", "mariadb", "--history", "14d"]);
    expect(history.code).not.toBe(0);
    expect(history.stderr.trim().split("\n")).toEqual([
      "onceboard: --history backfills the demo's history in PostgreSQL; the demo on MariaDB (--store mariadb) has none: leave --history out or say --history off",
    ]);
    for (const script of ["scripts/demo-verify.ts", "scripts/demo-reset.ts"]) {
      const r = await fails([script, "--store", "oracle"]);
      expect(r.code).not.toBe(0);
      expect(r.stderr.trim().split("\n")[0]).toBe('onceboard: --store must be postgres or mariadb (got "oracle")');
    }
  });
});
