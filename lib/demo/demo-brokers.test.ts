import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { findFreePort } from "../db/free-port";
import { findTestNats, findTestRabbit, testNatsUrl, testRabbitUrl } from "../queues/testing/brokers";
import { sleep, waitFor } from "../queues/testing/wait";
import { demoBrokerNames, removeDemoBrokerQueues } from "./broker";
import { demoSettingsFromEnv } from "./settings";
import { type DemoProcesses, startDemoProcesses } from "./supervisor";
import { formatReport, verifyDemo } from "./verify";

/**
 * The demo on RabbitMQ and on NATS JetStream (`npm start -- --broker rabbitmq|nats`): the same
 * producer, workers, faults and demo:verify as on pg-boss (lib/demo/demo.test.ts), shorter.
 */
const available = { rabbitmq: await findTestRabbit(), nats: await findTestNats() };
const brokerUrls = { rabbitmq: testRabbitUrl(), nats: testNatsUrl() };

describe("the demo on RabbitMQ and NATS JetStream (real worker processes, the machine's brokers)", () => {
  for (const broker of ["rabbitmq", "nats"] as const) {
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
            broker === "rabbitmq" ? demoBrokerNames(db.sqlUrl).queue("order.paid") : demoBrokerNames(db.sqlUrl).stream,
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
