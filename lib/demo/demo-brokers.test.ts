import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { findTestMariadb, testMariadbDatabaseName } from "../../test/mariadb";
import { findFreePort } from "../db/free-port";
import { dropMysqlDatabase } from "../db/scratch";
import { findTestNats, findTestRabbit, testNatsUrl, testRabbitUrl } from "../queues/testing/brokers";
import { findTestRedis } from "../queues/testing/redis";
import { sleep, waitFor } from "../queues/testing/wait";
import { demoBrokerNames, removeDemoBrokerQueues } from "./broker";
import { resetMariadbDemo } from "./reset";
import { DEMO_APP_PREFIX, demoSettingsFromEnv } from "./settings";
import { mariadbOnly, mariadbShop, mariadbUrlFor, type Shop, type ShopStatement, shopTablesPresent } from "./shop";
import { type DemoProcesses, startDemoProcesses } from "./supervisor";
import { formatReport, verifyDemo } from "./verify";

/**
 * The demo on BullMQ, RabbitMQ and NATS JetStream (`npm start -- --broker bullmq|rabbitmq|nats`): the same
 * producer, workers, faults and demo:verify as on pg-boss (lib/demo/demo.test.ts), shorter.
 */
const available = { bullmq: await findTestRedis(), rabbitmq: await findTestRabbit(), nats: await findTestNats() };
const mariadb = await findTestMariadb();
const ROOT = path.resolve(import.meta.dirname, "../..");
const brokerUrls = {
  redis: available.bullmq ?? "redis://127.0.0.1:6379",
  rabbitmq: testRabbitUrl(),
  nats: testNatsUrl(),
};

describe("the demo on BullMQ, RabbitMQ and NATS JetStream (real worker processes, the machine's brokers)", () => {
  for (const broker of ["bullmq", "rabbitmq", "nats"] as const) {
    describe.skipIf(!available[broker])(broker, () => {
      let db: TestDatabase;
      let demo: DemoProcesses | undefined;
      let demoPool: pg.Pool;
      const logDir = fs.mkdtempSync(path.join(os.tmpdir(), `onceboard-demo-${broker}-`));
      beforeAll(async () => {
        db = await createTestDatabase();
        demoPool = new pg.Pool({ connectionString: db.sqlUrl, max: 4 });
      });
      afterAll(async () => {
        await demo?.stop();
        if (db) {
          // The shared broker keeps nothing of this test's demo.
          const removed = await removeDemoBrokerQueues(db.sqlUrl, brokerUrls);
          expect(removed.join(" ")).toContain(
            broker === "nats" ? demoBrokerNames(db.sqlUrl).stream : demoBrokerNames(db.sqlUrl).queue("order.paid"),
          );
        }
        await demoPool?.end();
        await db?.drop();
      });

      it("runs 30 s with every fault on; demo:verify reports 0 double captures and 0 lost", { timeout: 300_000 }, async () => {
        const settings = demoSettingsFromEnv({} as NodeJS.ProcessEnv, {
          broker,
          rate: 3,
          crash: 0.03,
          slow: 0.03,
          violation: 0.06,
          keyReuse: 0.03,
          concurrentDuplicates: 0.3,
          republishes: 0.2,
          lateReplays: 0.1,
          lateReplayMinSeconds: 5,
          lateReplayMaxSeconds: 15,
          rollupFlushMs: 1000,
        });
        demo = await startDemoProcesses({ url: db.sqlUrl, settings, brokerUrls, logDir, freePort: findFreePort });
        await demo.ready();
        await sleep(30_000);
        await demo.stopProducer();
        // The workers finish what was published: every order paid, nothing in progress.
        const report = await waitFor(
          "every order paid and no effect in progress",
          async () => {
            const r = await verifyDemo(demoPool, { graceSeconds: 0 });
            const { rows } = await demoPool.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM effects WHERE status = 'in_progress'",
            );
            return r.totals.lost === 0 && rows[0]?.n === 0 ? r : null;
          },
          180_000,
        );
        await demo.stop();
        demo = undefined;
        console.log(formatReport(report).join("\n"));
        expect(report.totals.orders).toBeGreaterThan(30);
        expect(report.totals.doubleCaptures).toBe(0);
        expect(report.totals.doubleReceipts).toBe(0);
        expect(report.totals.doubleRefunds).toBe(0);
        expect(report.ok).toBe(true);
        // Dead letters are the producer's key reuses (and its parked late replays) only.
        const { rows } = await demoPool.query<{ reason: string }>("SELECT reason FROM demo_dead_letters");
        for (const r of rows) expect(r.reason).toMatch(/different payload|parked by the demo producer/);
        const suppressed = await demoPool.query<{ n: number }>(
          "SELECT coalesce(sum(suppressed), 0)::int AS n FROM worker_stats_minute",
        );
        expect(suppressed.rows[0]?.n).toBeGreaterThan(0);
      });
    });
  }
});

/** Effects and rollups of the demo's workers (marked), on either engine. */
const MARKED_EFFECTS: ShopStatement = {
  pg: "SELECT count(*)::int AS n FROM effects WHERE marked",
  mysql: "SELECT count(*) AS n FROM effects WHERE marked",
};
const IN_PROGRESS: ShopStatement = {
  pg: "SELECT count(*)::int AS n FROM effects WHERE status = 'in_progress'",
  mysql: "SELECT count(*) AS n FROM effects WHERE status = 'in_progress'",
};
const SUPPRESSED: ShopStatement = {
  pg: "SELECT coalesce(sum(suppressed), 0)::int AS n FROM worker_stats_minute",
  mysql: "SELECT coalesce(sum(suppressed), 0) AS n FROM worker_stats_minute",
};

describe.skipIf(!mariadb)(
  "the demo on MariaDB (`npm start -- --store mariadb`: real worker processes, pg-boss, the machine's MariaDB)",
  () => {
    let db: TestDatabase;
    let demo: DemoProcesses | undefined;
    let demoPool: pg.Pool;
    let shop: Shop;
    const database = testMariadbDatabaseName("ob_demo_t");
    const shopUrl = mariadbUrlFor(mariadb ?? "mysql://127.0.0.1", database);
    const logDir = fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-demo-mariadb-"));
    beforeAll(async () => {
      db = await createTestDatabase();
      demoPool = new pg.Pool({ connectionString: db.sqlUrl, max: 4 });
      shop = mariadbShop(shopUrl, { max: 2 });
    });
    afterAll(async () => {
      await demo?.stop();
      await shop?.close();
      if (mariadb) await dropMysqlDatabase(mariadbUrlFor(mariadb, ""), database);
      await demoPool?.end();
      await db?.drop();
    });

    it("runs 30 s with every fault on, the workers' effects and the shop's books in MariaDB; demo:verify --store mariadb reports 0 double captures and 0 lost", {
      timeout: 300_000,
    }, async () => {
      const settings = demoSettingsFromEnv(
        { ...({} as NodeJS.ProcessEnv), DEMO_STORE: "mariadb" },
        {
          rate: 3,
          crash: 0.03,
          slow: 0.03,
          violation: 0.06,
          keyReuse: 0.03,
          concurrentDuplicates: 0.3,
          republishes: 0.2,
          lateReplays: 0.1,
          lateReplayMinSeconds: 5,
          lateReplayMaxSeconds: 15,
          rollupFlushMs: 1000,
        },
      );
      expect(settings.store).toBe("mariadb");
      demo = await startDemoProcesses({ url: db.sqlUrl, settings, shopUrl, logDir, freePort: findFreePort });
      await demo.ready();
      await sleep(30_000);
      await demo.stopProducer();
      const count = async (statement: ShopStatement) => Number((await shop.rows<{ n: number }>(statement))[0]?.n ?? 0);
      const report = await waitFor(
        "every order paid and no effect in progress",
        async () => {
          const r = await verifyDemo(demoPool, { graceSeconds: 0, shop });
          return r.totals.lost === 0 && (await count(IN_PROGRESS)) === 0 ? r : null;
        },
        180_000,
      );
      await demo.stop();
      demo = undefined;
      console.log(formatReport(report).join("\n"));
      expect(report.totals.orders).toBeGreaterThan(30);
      expect(report.totals.doubleCaptures).toBe(0);
      expect(report.totals.doubleReceipts).toBe(0);
      expect(report.totals.doubleRefunds).toBe(0);
      expect(report.ok).toBe(true);
      // The workers wrote their effects through the library into MariaDB, none into PostgreSQL.
      expect(await count(MARKED_EFFECTS)).toBeGreaterThan(report.totals.orders);
      expect(await count(SUPPRESSED)).toBeGreaterThan(0);
      const onPostgres = await demoPool.query<{ n: number }>("SELECT count(*)::int AS n FROM effects");
      expect(onPostgres.rows[0]?.n).toBe(0);
      // Each worker recorded its start in MariaDB under its workerName: what the console counts its restarts from.
      const started = await shop.rows<{ worker_name: string }>(
        mariadbOnly("SELECT DISTINCT worker_name FROM worker_starts ORDER BY worker_name"),
      );
      expect(started.map((r) => r.worker_name)).toEqual(
        Array.from({ length: settings.workers }, (_, i) => `${DEMO_APP_PREFIX}-worker-${i}`),
      );
      // Dead letters (in PostgreSQL, beside the broker) are the producer's key reuses and parked replays only.
      const { rows } = await demoPool.query<{ reason: string }>("SELECT reason FROM demo_dead_letters");
      for (const r of rows) expect(r.reason).toMatch(/different payload|parked by the demo producer/);

      // npm run demo:verify -- --store mariadb, as a user runs it after `npm start -- --store mariadb`.
      const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          ["--import", "tsx", path.join(ROOT, "scripts", "demo-verify.ts"), "--grace", "0", "--store", "mariadb"],
          { cwd: ROOT, env: { ...process.env, DATABASE_URL: db.url, MARIADB_URL: shopUrl } },
        );
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk) => {
          stdout += chunk;
        });
        child.stderr.on("data", (chunk) => {
          stderr += chunk;
        });
        child.on("exit", (code) => resolve({ code, stdout, stderr }));
      });
      expect(run.stdout, run.stderr).toContain(
        `demo orders=${report.totals.orders} captures=${report.totals.captures} double_captures=0 lost=0`,
      );
      expect(run.stdout).toMatch(/^reconciliation: not run: the demo's effects are on MariaDB/m);
      expect(run.code, run.stdout + run.stderr).toBe(0);

      // demo:reset on MariaDB: refused while another session uses the database (this test's pool),
      // then exactly the demo's rows and the shop's tables go.
      const resetter = mariadbShop(shopUrl, { max: 1 });
      try {
        await count(MARKED_EFFECTS); // the test's pool holds a connection to the database now
        await expect(resetMariadbDemo(resetter)).rejects.toThrow(/stop `npm start` first/);
        await shop.close();
        const r = await resetMariadbDemo(resetter);
        expect(r.orders).toBe(report.totals.orders);
        expect(r.effects).toBeGreaterThan(report.totals.orders);
        expect(await shopTablesPresent(resetter)).toBe(false);
        expect(Number((await resetter.rows<{ n: number }>(MARKED_EFFECTS))[0]?.n)).toBe(0);
      } finally {
        await resetter.close();
      }
    });
  },
);
