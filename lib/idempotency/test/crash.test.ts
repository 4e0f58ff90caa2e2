import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BOUNDARIES, type Boundary, naivePaidOrderJob, paidOrderJob } from "./crash-job";
import { eachEngine } from "./engine-suite";
import { createEngineDatabase, ENGINES_AND_DRIVERS, type EngineDatabase } from "./engines";
import { createProviderTables, eachCoalescing, metricValue, testEffects } from "./helpers";

let db: EngineDatabase;

const WORKER = path.join(import.meta.dirname, "crash-worker.ts");

/** Runs the job in a child process and SIGKILLs it at `boundary`. Resolves once it is dead. */
function runAndKill(orderId: string, boundary: Boundary, coalesce: boolean, naive = false): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", WORKER], {
      cwd: path.resolve(import.meta.dirname, "../../.."),
      env: {
        ...process.env,
        CRASH_DATABASE_URL: db.url,
        CRASH_ORDER_ID: orderId,
        CRASH_KILL_AT: boundary,
        CRASH_NAIVE: naive ? "1" : "0",
        CRASH_COALESCE: coalesce ? "1" : "0",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let killed = false;
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (!killed && out.includes(`BOUNDARY ${boundary}`)) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    child.on("error", reject);
    child.on("exit", (_code, signal) => {
      if (killed && signal === "SIGKILL") resolve();
      else reject(new Error(`worker did not reach ${boundary}: ${out}\n${err}`));
    });
  });
}

async function state(orderId: string) {
  const q = async (sql: string | { pg: string; mysql: string }) => (await db.rows<Record<string, unknown>>(sql, [orderId]))[0];
  return {
    captures: Number((await q("SELECT count(*) AS n FROM fake_provider_charges WHERE order_id = $1"))?.n),
    providerRequests: Number((await q("SELECT count(*) AS n FROM fake_provider_requests WHERE order_id = $1"))?.n),
    paidCount: Number((await q("SELECT paid_count FROM orders WHERE id = $1"))?.paid_count),
    receipts: Number((await q("SELECT count(*) AS n FROM sent_mail WHERE order_id = $1"))?.n),
    receiptStatus: (
      await q({
        pg: "SELECT status FROM effects WHERE key = 'receipt:' || $1",
        mysql: "SELECT status FROM effects WHERE `key` = CONCAT('receipt:', $1)",
      })
    )?.status as string | undefined,
  };
}

// The crashes below happen on each engine with coalescing on and off (in the child and in the
// retry), each in a database of its own.
eachEngine(
  (_engine, variant) =>
    eachCoalescing((coalesce) => {
      beforeAll(async () => {
        db = await createEngineDatabase(variant, { poolSize: 10 });
        await createProviderTables(db);
      });
      afterAll(async () => {
        await db?.drop();
      });

      describe("a worker SIGKILLed at each step boundary, then retried", () => {
        it("captures once, marks paid once, sends at most one receipt, and counts an abandoned receipt", async () => {
          const orders = BOUNDARIES.map((boundary, i) => ({ boundary, orderId: `crash-${i}-${boundary.replace(":", "-")}` }));
          for (const { orderId } of orders) await db.run("INSERT INTO orders (id) VALUES ($1)", [orderId]);
          // The children run side by side; each dies at its own boundary.
          await Promise.all(orders.map(({ orderId, boundary }) => runAndKill(orderId, boundary, coalesce)));

          const outcomes: Record<string, unknown> = {};
          for (const { orderId, boundary } of orders) {
            // The redelivery: waits out the dead worker's 300 ms lease, then resumes.
            const effects = testEffects(db, { wait: "10s" });
            const result = await paidOrderJob(effects, db.pool, orderId);
            const s = await state(orderId);
            const abandoned = await metricValue(effects.registry, "idem_abandoned_total", { job_type: "order.paid" });
            outcomes[boundary] = {
              ...s,
              abandoned,
              steps: result.steps.map((step) => `${step.key.split(":")[0]}=${step.result}`),
            };

            expect(s.captures, boundary).toBe(1);
            expect(s.paidCount, boundary).toBe(1);
            expect(s.receipts, boundary).toBeLessThanOrEqual(1);
            if (boundary === "receipt:claimed" || boundary === "receipt:sent") {
              // Died between claiming the receipt and completing it: never sent twice, by design
              // possibly never, and counted.
              expect(abandoned, boundary).toBe(1);
              expect(s.receiptStatus, boundary).toBe("abandoned");
              expect(s.receipts, boundary).toBe(boundary === "receipt:sent" ? 1 : 0);
            } else {
              expect(abandoned, boundary).toBe(0);
              expect(s.receipts, boundary).toBe(1);
            }
            // A full redelivery after the retry changes nothing.
            const again = await paidOrderJob(testEffects(db), db.pool, orderId);
            expect(again.duplicate, boundary).toBe(true);
            expect(await state(orderId)).toEqual(s);
          }
          // The capture that was sent before the crash was redone with the same key, and deduplicated
          // by the provider: two requests, one charge.
          expect(outcomes["capture:sent"]).toMatchObject({ providerRequests: 2, captures: 1 });
          expect(outcomes["capture:done"]).toMatchObject({
            providerRequests: 1,
            steps: ["capture=duplicate", "mark-paid=ran", "receipt=ran"],
          });
          // Eight tsx children start side by side: on a loaded shared machine that alone can take a minute.
        }, 180_000);

        it("the same harness catches a naive status-flag job charging twice after a crash", async () => {
          const orderId = "crash-naive";
          await db.run("INSERT INTO orders (id) VALUES ($1)", [orderId]);
          await runAndKill(orderId, "capture:sent", coalesce, true);
          await naivePaidOrderJob(db.pool, orderId);
          expect((await state(orderId)).captures).toBe(2);
        });
      });
    }),
  ENGINES_AND_DRIVERS,
);
