import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { loadConfig } from "../config";
import { findFreePort } from "../db/free-port";
import { sleep, waitFor } from "../queues/testing/wait";
import { startReconcileSchedule } from "../reconciliation/schedule";
import { backfillHistory } from "./history";
import { writeDemoProvidersFile } from "./providers-file";
import { compareWithPlanted, formatTruth } from "./reconciliation-truth";
import { type DemoSettings, demoSettingsFromEnv } from "./settings";
import { type DemoProcesses, startDemoProcesses } from "./supervisor";
import { formatReport, verifyDemo } from "./verify";

let db: TestDatabase;
let demo: DemoProcesses | undefined;
// The demo names its tables and the library's unqualified: it connects as npm start connects it.
let demoPool: pg.Pool;
const logDir = fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-demo-test-"));
/** The live run of the first test, which the second compares the backfilled history with. */
let liveRun: { settings: DemoSettings; startedAt: Date; producerSeconds: number } | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  demoPool = new pg.Pool({ connectionString: db.sqlUrl, max: 4 });
});
afterAll(async () => {
  await demo?.stop();
  await demoPool.end();
  await db.drop();
});

describe("the demo workload (real worker processes, producer and pg-boss)", () => {
  it("runs 60 s with every fault on; demo:verify reports 0 double captures and 0 lost, and the reconciliation finds what the provider planted", {
    timeout: 420_000,
  }, async () => {
    // Faults well above the defaults so each one happens in a one-minute run.
    const settings = demoSettingsFromEnv({} as NodeJS.ProcessEnv, {
      rate: 3,
      crash: 0.03,
      slow: 0.03,
      violation: 0.06,
      keyReuse: 0.03,
      concurrentDuplicates: 0.3,
      republishes: 0.2,
      lateReplays: 0.1,
      lateReplayMinSeconds: 5,
      lateReplayMaxSeconds: 30,
      rollupFlushMs: 1000,
      // The provider's planted disagreements, well above the defaults too: the reconciliation must find each.
      providerDuplicate: 0.03,
      providerLost: 0.03,
      providerKeyless: 0.03,
      providerDrift: 0.03,
    });
    const startedAt = new Date();
    demo = await startDemoProcesses({ url: db.sqlUrl, settings, logDir, freePort: findFreePort });
    await demo.ready();
    await sleep(60_000);
    await demo.stopProducer();
    liveRun = { settings, startedAt, producerSeconds: (Date.now() - startedAt.getTime()) / 1000 };

    // Let the workers finish what was published: nothing waiting, retrying or active.
    await waitFor(
      "the demo queues to drain",
      async () => {
        const { rows } = await demoPool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pgboss_demo.job
            WHERE name NOT LIKE '%.dead-letter' AND state IN ('created', 'retry', 'active')`,
        );
        return rows[0]?.n === 0;
      },
      240_000,
    );
    // The maintenance loop's reconciliation, as the console runs it against the demo's provider
    // process (the rolling hour, "now" a pass later so the hour holds the whole run, no grace).
    const config = loadConfig({
      DATABASE_URL: db.url,
      STRIPE_API_KEY: demo.provider.apiKey,
      STRIPE_HOST: "127.0.0.1",
      STRIPE_PORT: String(demo.provider.stripePort),
      STRIPE_PROTOCOL: "http",
      ONCEBOARD_PROVIDERS_FILE: writeDemoProvidersFile(logDir, demo.provider),
      RECONCILE_INTERVAL_SECONDS: "0",
      RECONCILE_GRACE_SECONDS: "0",
    });
    const schedule = startReconcileSchedule({
      pool: db.pool,
      config,
      registry: new Registry(),
      now: () => new Date(Date.now() + 5 * 60_000),
    });
    await schedule.runOnce();
    await schedule.stop();
    const { rows: rolling } = await db.pool.query<{ id: number; window_from: Date; window_to: Date; status: string }>(
      `SELECT id, window_from, window_to, status FROM reconciliation_runs
        WHERE trigger = 'schedule' AND window_to - window_from = interval '1 hour' ORDER BY provider`,
    );
    expect(rolling.map((r) => r.status)).toEqual(["completed", "completed"]);
    const window = { from: rolling[0]!.window_from, to: rolling[0]!.window_to };
    const truth = await compareWithPlanted(
      demoPool,
      window,
      rolling.map((r) => r.id),
    );
    console.log(formatTruth(truth, window).join("\n"));
    for (const kind of truth.kinds) expect(kind.planted, kind.kind).toBeGreaterThan(0);
    expect(truth.mismatches).toBe(0);

    await demo.stop();
    demo = undefined;

    const report = await verifyDemo(demoPool, { graceSeconds: 0 });
    const lines = formatReport(report);
    console.log(lines.join("\n"));
    expect(report.tenants.map((t) => t.tenant)).toEqual(["acme", "globex", "initech"]);
    expect(report.totals.orders).toBeGreaterThan(60);
    expect(report.totals.doubleCaptures).toBe(0);
    expect(report.totals.lost).toBe(0);
    expect(report.totals.doubleReceipts).toBe(0);
    expect(report.totals.doubleRefunds).toBe(0);
    expect(report.ok).toBe(true);
    expect(lines.at(-1)).toMatch(/^demo orders=\d+ captures=\d+ double_captures=0 lost=0$/);

    // No job gave up: every pipeline job completed (dead letters are the key-reuse rejects only).
    const failed = await demoPool.query("SELECT 1 FROM pgboss_demo.job WHERE name NOT LIKE '%.dead-letter' AND state = 'failed'");
    expect(failed.rowCount).toBe(0);

    // The rollups the console reads: suppressions for several job types, uncaught violations.
    const stats = await demoPool.query<{ job_type: string; suppressed: number; marked: boolean }>(
      `SELECT job_type, sum(suppressed)::int AS suppressed, bool_and(marked) AS marked
         FROM worker_stats_minute WHERE minute >= date_trunc('minute', $1::timestamptz) GROUP BY job_type`,
      [startedAt],
    );
    expect(stats.rows.filter((r) => r.suppressed > 0).length).toBeGreaterThanOrEqual(3);
    expect(stats.rows.every((r) => r.marked)).toBe(true);
    const violations = await demoPool.query<{ constraint_name: string }>(
      "SELECT DISTINCT constraint_name FROM uncaught_violations_minute WHERE marked",
    );
    expect(violations.rows.map((r) => r.constraint_name)).toContain("demo_accounting_entries_entry_key");
    const nonDemo = await demoPool.query("SELECT 1 FROM effects WHERE NOT marked");
    expect(nonDemo.rowCount).toBe(0);
  });

  it("backfills history at the live run's own rate: claims and suppressions per minute within a factor of 2", async () => {
    if (!liveRun) throw new Error("the live run above did not get as far as stopping its producer");
    const { settings, startedAt, producerSeconds } = liveRun;
    // Two hours of history ending before the live run's first minute, from the same settings.
    // One connection: each day is a transaction of its own.
    const client = await demoPool.connect();
    try {
      await backfillHistory(client, { spanMs: 2 * 3_600_000, settings, now: new Date(startedAt.getTime() - 60_000) });
    } finally {
      client.release();
    }
    const { rows } = await demoPool.query<{ live: boolean; claims: number; suppressed: number; minutes: number }>(
      `SELECT minute >= date_trunc('minute', $1::timestamptz) AS live, sum(claims)::float8 AS claims,
              sum(suppressed)::float8 AS suppressed, count(DISTINCT minute)::int AS minutes
         FROM worker_stats_minute WHERE marked GROUP BY 1`,
      [startedAt],
    );
    const live = rows.find((r) => r.live);
    const history = rows.find((r) => !r.live);
    if (!live || !history) throw new Error(`expected live and history minutes, got ${JSON.stringify(rows)}`);
    // The live run's counts over the minute its producer ran (its workers drained the rest after it);
    // the history's over the minutes it holds.
    const perMinute = {
      live: { claims: live.claims / (producerSeconds / 60), suppressed: live.suppressed / (producerSeconds / 60) },
      history: { claims: history.claims / history.minutes, suppressed: history.suppressed / history.minutes },
    };
    console.log(`per minute: ${JSON.stringify(perMinute)}`);
    for (const measure of ["claims", "suppressed"] as const) {
      const ratio = perMinute.history[measure] / perMinute.live[measure];
      expect(
        ratio,
        `${measure}: history ${perMinute.history[measure]} vs live ${perMinute.live[measure]} per minute`,
      ).toBeGreaterThan(0.5);
      expect(ratio, measure).toBeLessThan(2);
    }
  });
});
