import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eachEngine } from "./engine-suite";
import { type AppHandle, createEngineDatabase, ENGINES_AND_DRIVERS, type EngineDatabase } from "./engines";
import { createProviderTables, eachCoalescing, sleep, testEffects } from "./helpers";

/**
 * The races from the seed, each run through one harness against the library and against the
 * obvious naive build, so every test is shown able to fail.
 */
let db: EngineDatabase;

/** A payment provider that does NOT deduplicate: every call is a capture. */
function fakeProvider() {
  let captures = 0;
  return {
    get captures() {
      return captures;
    },
    async capture(_orderId: string) {
      captures++;
      await sleep(2); // the network
      return { id: `ch_${captures}` };
    },
  };
}

type Handler = (delivery: { orderId: string; messageId: string }, provider: ReturnType<typeof fakeProvider>) => Promise<unknown>;

/** Delivers the same message `n` times at once; returns how many captures the provider saw. */
async function deliverConcurrently(n: number, orderId: string, handler: Handler): Promise<number> {
  const provider = fakeProvider();
  await db.run("INSERT INTO orders (id) VALUES ($1)", [orderId]);
  const results = await Promise.allSettled(
    Array.from({ length: n }, (_, i) => handler({ orderId, messageId: `msg-${orderId}-${i}` }, provider)),
  );
  const failures = results.filter((r) => r.status === "rejected");
  if (failures.length) throw (failures[0] as PromiseRejectedResult).reason;
  return provider.captures;
}

// Every race below runs on each engine with coalescing on and off, each in a database of its own.
eachEngine(
  (engine, variant) =>
    eachCoalescing(() => {
      beforeAll(async () => {
        // 50 deliveries at once, each on its own connection.
        db = await createEngineDatabase(variant, { poolSize: 55 });
        await createProviderTables(db);
      });
      afterAll(async () => {
        await db?.drop();
      });

      describe("N deliveries at once", () => {
        it("50 concurrent deliveries of one message capture exactly once — 20 times over", async () => {
          const effects = testEffects(db, { wait: "30s" });
          const library: Handler = ({ orderId, messageId }, provider) =>
            effects.once({ tenant: "acme", key: `capture:${orderId}`, jobType: "order.capture", messageId }, () =>
              provider.capture(orderId),
            );
          const perRound: number[] = [];
          for (let round = 0; round < 20; round++) perRound.push(await deliverConcurrently(50, `lib-${round}`, library));
          expect(perRound).toEqual(new Array(20).fill(1));
          await effects.flush();
          const [row] = await db.rows<{ n: number | string; dups: number | string }>({
            pg: "SELECT count(*) AS n, sum(duplicate_count) AS dups FROM effects WHERE key LIKE 'capture:lib-%'",
            mysql: "SELECT COUNT(*) AS n, SUM(duplicate_count) AS dups FROM effects WHERE `key` LIKE 'capture:lib-%'",
          });
          expect({ n: Number(row?.n), dups: Number(row?.dups) }).toEqual({ n: 20, dups: 20 * 49 });
        });

        it("the same harness catches a naive check-then-act handler charging twice", async () => {
          // Every delivery reads before any writes: the window a busy machine may close by chance
          // (one delivery finishing before the others read) is held open by a barrier, not by luck.
          const readers = new Map<string, { count: number; allRead: Promise<void>; release: () => void }>();
          const allHaveRead = (orderId: string) => {
            let entry = readers.get(orderId);
            if (!entry) {
              let release = () => {};
              const allRead = new Promise<void>((resolve) => {
                release = resolve;
              });
              entry = { count: 0, allRead, release };
              readers.set(orderId, entry);
            }
            entry.count += 1;
            if (entry.count === 50) entry.release();
            return entry.allRead;
          };
          const naive: Handler = async ({ orderId }, provider) => {
            const rows = await db.rows<{ status: string }>("SELECT status FROM orders WHERE id = $1", [orderId]);
            await allHaveRead(orderId);
            if (rows[0]?.status === "paid") return; // the guard: both deliveries see 'pending'
            await provider.capture(orderId);
            await db.run("UPDATE orders SET status = 'paid' WHERE id = $1", [orderId]);
          };
          const perRound: number[] = [];
          for (let round = 0; round < 3; round++) perRound.push(await deliverConcurrently(50, `naive-${round}`, naive));
          expect(Math.max(...perRound)).toBeGreaterThan(1);
        });
      });

      // On MariaDB effects has no partitions: one primary key holds every day, so a duplicate across
      // midnight is the ordinary duplicate (claims.test.ts, rollback-race.test.ts).
      describe.runIf(engine === "postgres")("a duplicate straddling a partition boundary", () => {
        const yesterdayLastMs = () => {
          const now = new Date();
          return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - 1);
        };

        /**
         * The first claim landed in yesterday's partition at 23:59:59.999; two deliveries arrive now, at
         * once. Returns how many times the effect has happened in total (the first run included).
         */
        async function straddle(key: string, status: "completed" | "in_progress", claim: (pool: AppHandle) => Promise<boolean>) {
          await db.run(
            `INSERT INTO effects (tenant_id, key, job_type, status, policy, owner, lease_until, outcome, created_at)
         VALUES ('acme', $1, 'j', $2, 'external', 'worker-that-died', $3, '"first"', $3)`,
            [key, status, yesterdayLastMs()],
          );
          const ran = await Promise.all([claim(db.pool), claim(db.pool)]);
          return { performed: (status === "completed" ? 1 : 0) + ran.filter(Boolean).length, ran };
        }

        it("a completed effect from yesterday suppresses both of today's deliveries (one effect, one row)", async () => {
          const effects = testEffects(db);
          const key = "capture:straddle-1";
          const { performed } = await straddle(key, "completed", async () => {
            const r = await effects.once({ tenant: "acme", key, jobType: "j" }, () => "second");
            return r.result === "ran";
          });
          expect(performed).toBe(1);
          expect(await db.rows("SELECT tableoid::regclass::text AS part FROM effects WHERE key = $1", [key])).toHaveLength(1);
        });

        it("an expired claim from yesterday is taken over by exactly one of today's deliveries, in place", async () => {
          const effects = testEffects(db, { wait: "10s" });
          const key = "capture:straddle-2";
          const { performed } = await straddle(key, "in_progress", async () => {
            const r = await effects.once({ tenant: "acme", key, jobType: "j" }, async () => {
              await sleep(10);
              return "redone";
            });
            return r.result === "ran";
          });
          expect(performed).toBe(1);
          expect(await db.rows("SELECT status, attempt FROM effects WHERE key = $1", [key])).toEqual([
            { status: "completed", attempt: 2 },
          ]);
        });

        it("the same harness catches a naive INSERT … ON CONFLICT that trusts the per-partition unique index", async () => {
          const key = "capture:straddle-naive";
          const { performed } = await straddle(key, "completed", async (pool) => {
            const rowCount = await db.run(
              `INSERT INTO effects (tenant_id, key, job_type, status, policy) VALUES ('acme', $1, 'j', 'in_progress', 'external')
           ON CONFLICT DO NOTHING`,
              [key],
            );
            void pool;
            return rowCount === 1;
          });
          expect(performed).toBe(2);
        });
      });
    }),
  ENGINES_AND_DRIVERS,
);
