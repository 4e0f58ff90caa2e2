import pg from "pg";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testPrismaClient } from "../../../test/prisma";
import { EffectInFlightError, IsolationLevelError } from "../errors";
import { createEffects } from "../index";
import { withEachEngine } from "./engine-suite";
import { type AppHandle, appRun, ENGINES_AND_DRIVERS, type EngineDatabase } from "./engines";
import { createProviderTables, silentLogger, sleep, testEffects } from "./helpers";

let db: EngineDatabase;
let n = 0;
const uniq = (prefix: string) => `${prefix}-${++n}-${Math.random().toString(36).slice(2, 7)}`;

async function order(id: string) {
  await db.run("INSERT INTO orders (id) VALUES ($1)", [id]);
  return async () => {
    const [row] = await db.rows<{ status: string; paid_count: number }>("SELECT status, paid_count FROM orders WHERE id = $1", [
      id,
    ]);
    return row && { status: row.status, paid_count: Number(row.paid_count) };
  };
}
const effectCount = async (key: string) =>
  Number(
    (
      await db.rows<{ n: number }>(
        { pg: "SELECT count(*) AS n FROM effects WHERE key = $1", mysql: "SELECT COUNT(*) AS n FROM effects WHERE `key` = $1" },
        [key],
      )
    )[0]?.n,
  );
const PAY = "UPDATE orders SET status = 'paid', paid_count = paid_count + 1 WHERE id = $1";
const COUNT_PAID = "UPDATE orders SET paid_count = paid_count + 1 WHERE id = $1";

withEachEngine(
  (made) => {
    if (made) db = made;
  },
  (engine) => {
    describe("transactional steps", () => {
      it("survives the server cutting the step's connection mid-transaction; the effect still happens once", async () => {
        // Found by the soak: a connection cut between two of a step's queries was an unhandled
        // 'error' event that killed the whole worker process.
        const pool = db.newPool(2);
        const effects = testEffects(pool, { schema: db.schema });
        const id = uniq("order");
        const read = await order(id);
        const key = `mark-paid:${id}`;
        let runs = 0;
        const deliver = () =>
          effects.job({ tenant: "acme", jobType: "order.paid", messageId: uniq("m") }, (job) =>
            job.transaction(key, async (tx) => {
              runs += 1;
              if (runs === 1) await sleep(400);
              await appRun(tx as AppHandle, PAY, [id]);
              return { paid: true };
            }),
          );
        const first = deliver().then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        );
        await sleep(150);
        expect(await db.killConnections(pool)).toBeGreaterThan(0);
        const settled = await first;
        // Retried inside the library (57P01 is retryable) or failed to the caller, who redelivers.
        if ("error" in settled) await deliver();
        expect(await read()).toEqual({ status: "paid", paid_count: 1 });
        expect(await effectCount(key)).toBe(1);
        await effects.close();
        await db.closePool(pool);
      });

      it("commits the claim with the step's writes; a duplicate returns the stored outcome", async () => {
        const effects = testEffects(db);
        const id = uniq("order");
        const read = await order(id);
        const run = () =>
          effects.job({ tenant: "acme", jobType: "order.paid", messageId: uniq("m") }, (job) =>
            job.transaction(`mark-paid:${id}`, async (tx) => {
              await appRun(tx as AppHandle, PAY, [id]);
              return { paid: true };
            }),
          );
        expect((await run()).value).toEqual({ paid: true });
        const again = await run();
        expect(again.duplicate).toBe(true);
        expect(again.value).toEqual({ paid: true });
        expect(await read()).toEqual({ status: "paid", paid_count: 1 });
      });

      it("rolls the claim back with the writes when the step throws, so the retry runs it", async () => {
        const effects = testEffects(db);
        const id = uniq("order");
        const read = await order(id);
        const key = `mark-paid:${id}`;
        const step = (fail: boolean) =>
          effects.once({ tenant: "acme", key, jobType: "order.paid", policy: "transactional" }, async (_claim, tx) => {
            await appRun(tx as unknown as AppHandle, COUNT_PAID, [id]);
            if (fail) throw new Error("boom after the write");
            return "paid";
          });
        await expect(step(true)).rejects.toThrow("boom after the write");
        expect(await effectCount(key)).toBe(0);
        expect((await read())?.paid_count).toBe(0);
        expect((await step(false)).result).toBe("ran");
        expect((await read())?.paid_count).toBe(1);
        expect((await step(false)).result).toBe("duplicate");
      });

      it("joins the caller's own transaction: ROLLBACK undoes the claim, COMMIT keeps it", async () => {
        const effects = testEffects(db);
        const id = uniq("order");
        const read = await order(id);
        const key = `mark-paid:${id}`;
        const inCallerTx = async (finish: "COMMIT" | "ROLLBACK") => {
          const caller = await db.begin();
          try {
            const r = await effects.once(
              { tenant: "acme", key, jobType: "j", policy: "transactional", tx: caller.tx as never },
              async (_c, tx) => {
                await appRun(tx as unknown as AppHandle, COUNT_PAID, [id]);
                return 1;
              },
            );
            await (finish === "COMMIT" ? caller.commit() : caller.rollback());
            return r;
          } finally {
            caller.release();
          }
        };
        await inCallerTx("ROLLBACK");
        expect(await effectCount(key)).toBe(0);
        expect((await inCallerTx("COMMIT")).result).toBe("ran");
        expect((await inCallerTx("COMMIT")).result).toBe("duplicate");
        expect((await read())?.paid_count).toBe(1);
      });

      it("a duplicate of a transactional step still in its transaction waits, then gets the outcome — or reports in-flight", async () => {
        const effects = testEffects(db);
        const key = uniq("mark-paid:order");
        const caller = await db.begin();
        try {
          await effects.once(
            { tenant: "acme", key, jobType: "j", policy: "transactional", tx: caller.tx as never },
            () => "first",
          );
          // The caller's transaction holds the claim: a duplicate cannot see it yet and must not run.
          await expect(effects.once({ tenant: "acme", key, jobType: "j", wait: "100ms" }, () => "second")).rejects.toBeInstanceOf(
            EffectInFlightError,
          );
          const waiting = effects.once({ tenant: "acme", key, jobType: "j", wait: "10s" }, () => "second");
          // Commit only once the duplicate is blocked on the claim's lock (the advisory lock; InnoDB's row lock).
          for (let i = 0; i < 2000; i++) {
            if ((await db.lockWaits()) > 0) break;
            await sleep(5);
          }
          await caller.commit();
          expect(await waiting).toMatchObject({ result: "duplicate", outcome: "first" });
        } finally {
          caller.release();
        }
      });
    });

    // In the library's own transaction on a pg.Pool the claim is written completed (migration
    // 0023's p_completed); the MySQL store answers in_progress and keeps the completion statement.
    describe.runIf(engine === "postgres")("a claim written completed in the step's own transaction", () => {
      const pgPool = () => db.pool as pg.Pool;

      it("an empty outcome: the claim is written completed in the step's transaction, with no completion statement", async () => {
        const effects = testEffects(pgPool());
        const id = uniq("order");
        const read = await order(id);
        const key = `mark-paid:${id}`;
        const seen: string[] = [];
        const step = () =>
          effects.once({ tenant: "acme", key, jobType: "order.paid", policy: "transactional" }, async (claim, tx) => {
            // Inside the step the row is this transaction's alone: completed already, outcome empty.
            const row = await tx?.query("SELECT status, outcome, lease_until FROM effects WHERE key = $1", [key]);
            seen.push(`${row?.rows[0]?.status}/${row?.rows[0]?.outcome}/${row?.rows[0]?.lease_until}`);
            const lease = await claim.extendLease("30s");
            expect(lease.getTime()).toBeGreaterThan(Date.now() + 20_000);
            await tx?.query(COUNT_PAID, [id]);
          });
        const first = await step();
        expect(first.result).toBe("ran");
        expect(first.outcome).toBeNull();
        expect(seen).toEqual(["completed/null/null"]);
        const [row] = await db.rows(
          "SELECT status, outcome, error, completed_at IS NOT NULL AS done FROM effects WHERE key = $1",
          [key],
        );
        expect(row).toEqual({ status: "completed", outcome: null, error: null, done: true });
        const again = await step();
        expect(again.result).toBe("duplicate");
        expect(again.outcome).toBeNull();
        expect((await read())?.paid_count).toBe(1);
      });

      it("a non-empty outcome replaces the empty one the claim was written with; a throw leaves no row", async () => {
        const effects = testEffects(pgPool());
        const key = `refund:${uniq("order")}`;
        const step = (fail: boolean) =>
          effects.once({ tenant: "acme", key, jobType: "order.paid", policy: "transactional" }, async () => {
            if (fail) throw new Error("refused");
            return { refunded: 7 };
          });
        await expect(step(true)).rejects.toThrow("refused");
        expect(await effectCount(key)).toBe(0);
        expect((await step(false)).outcome).toEqual({ refunded: 7 });
        const again = await step(false);
        expect(again.result).toBe("duplicate");
        expect(again.outcome).toEqual({ refunded: 7 });
      });

      it("a step that caught its own failed statement commits nothing and says so, though its outcome was empty", async () => {
        const effects = testEffects(pgPool());
        const id = uniq("order");
        const read = await order(id);
        const key = `mark-paid:${id}`;
        const step = (swallow: boolean) =>
          effects.once({ tenant: "acme", key, jobType: "order.paid", policy: "transactional" }, async (_claim, tx) => {
            await tx?.query(COUNT_PAID, [id]);
            if (swallow) await tx?.query("SELECT 1/0").catch(() => {});
          });
        // The server would answer the COMMIT of the aborted transaction with a ROLLBACK: the step's
        // claim and write are gone, so reporting "ran" would lose the effect.
        await expect(step(true)).rejects.toMatchObject({ code: "EFFECTS_DATABASE" });
        expect(await effectCount(key)).toBe(0);
        expect((await read())?.paid_count).toBe(0);
        expect((await step(false)).result).toBe("ran");
        expect((await read())?.paid_count).toBe(1);
      });
    });

    // On a pg.Pool the library's own transaction sends BEGIN in one message with the claim's
    // EXECUTE, its values written as literals (literal-arguments.ts): one round trip fewer per step,
    // once the claim is prepared on the connection.
    describe.runIf(engine === "postgres")("BEGIN sent with the claim", () => {
      /**
       * A pool of one connection (so the statement the warm-up prepared is there for the step) whose
       * client records the text of every message it sends.
       */
      function recordingPool() {
        const pool = db.newPool(1) as pg.Pool;
        const sent: string[] = [];
        const wrapped = new WeakSet<object>();
        pool.on("acquire", (client) => {
          if (wrapped.has(client)) return;
          wrapped.add(client);
          const query = client.query.bind(client) as (...args: unknown[]) => unknown;
          (client as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
            sent.push(typeof config === "string" ? config : (config as { text: string }).text);
            return query(config, ...rest);
          };
        });
        return { pool, sent };
      }

      /** The library's effects on `pool`, past their one-time look for Citus before the first claim. */
      async function warmEffects(pool: pg.Pool, sent: string[]) {
        const effects = testEffects(pool, { schema: db.schema });
        await effects.once(
          { tenant: "acme", key: `warm:${uniq("w")}`, jobType: "warm", policy: "transactional" },
          async () => {},
        );
        sent.length = 0;
        return effects;
      }

      it("a fresh step takes three round trips (BEGIN with the claim, the write, COMMIT); its duplicate two", async () => {
        const { pool, sent } = recordingPool();
        const effects = await warmEffects(pool, sent);
        const id = uniq("order");
        const read = await order(id);
        const deliver = () =>
          effects.once(
            { tenant: "acme", key: `mark-paid:${id}`, jobType: "order.paid", messageId: uniq("m"), policy: "transactional" },
            async (_claim, tx) => {
              await appRun(tx as AppHandle, PAY, [id]);
            },
          );
        expect((await deliver()).result).toBe("ran");
        expect(sent).toHaveLength(3);
        expect(sent[0]).toMatch(/^BEGIN ISOLATION LEVEL READ COMMITTED; EXECUTE "onceboard_claim_v3[^"]*"\('acme', 'mark-paid:/);
        expect(sent[0]).toContain(`'mark-paid:${id}'`);
        expect(sent[1]).toBe(PAY);
        expect(sent[2]).toBe("COMMIT");
        sent.length = 0;
        expect((await deliver()).result).toBe("duplicate");
        expect(sent).toHaveLength(2);
        expect(sent[0]).toMatch(/^BEGIN ISOLATION LEVEL READ COMMITTED; EXECUTE /);
        expect(sent[1]).toBe("COMMIT");
        expect((await read())?.paid_count).toBe(1);
        await db.closePool(pool);
      });

      it("values that would break out of a literal are stored exactly as given, and their step runs once", async () => {
        const { pool, sent } = recordingPool();
        const effects = await warmEffects(pool, sent);
        const id = uniq("order");
        const read = await order(id);
        const tenant = `o'brien\\${id}`;
        const key = `mark-paid:x'); DROP TABLE effects; --$1 \\' $$ E'\\n' ${id}`;
        const jobType = "it's\\a $2 job";
        const messageId = `m'\\${id}`;
        const step = () =>
          effects.once({ tenant, key, jobType, messageId, policy: "transactional" }, async (_claim, tx) => {
            await tx?.query(COUNT_PAID, [id]);
            return { note: "it's" };
          });
        expect((await step()).result).toBe("ran");
        expect(sent[0]?.startsWith("BEGIN ISOLATION LEVEL READ COMMITTED; EXECUTE ")).toBe(true);
        const again = await step();
        expect(again.result).toBe("duplicate");
        expect(again.outcome).toEqual({ note: "it's" });
        const rows = await db.rows<{ tenant_id: string; key: string; job_type: string; first_message_id: string }>(
          "SELECT tenant_id, key, job_type, first_message_id FROM effects WHERE tenant_id = $1",
          [tenant],
        );
        expect(rows).toEqual([{ tenant_id: tenant, key, job_type: jobType, first_message_id: messageId }]);
        expect((await read())?.paid_count).toBe(1);

        // Text beyond ASCII keeps its own BEGIN and a bound parameter (literal-arguments.ts).
        sent.length = 0;
        const wide = `mark-paid:\u00c1\\' ünï ${id}`;
        const ran = await effects.once({ tenant, key: wide, jobType, policy: "transactional" }, async () => "wide");
        expect(ran.result).toBe("ran");
        expect(sent[0]).toBe("BEGIN ISOLATION LEVEL READ COMMITTED");
        expect(await db.rows("SELECT key FROM effects WHERE tenant_id = $1 AND key = $2", [tenant, wide])).toEqual([
          { key: wide },
        ]);
        await db.closePool(pool);
      });
    });

    // Prisma's pg adapter: PostgreSQL's alone.
    describe.runIf(engine === "postgres")("with Prisma", () => {
      let prisma: ReturnType<typeof testPrismaClient>;
      let prismaPool: pg.Pool;
      beforeAll(async () => {
        prismaPool = new pg.Pool({ connectionString: db.url, max: 5 });
        prismaPool.on("error", () => {});
        prisma = testPrismaClient(prismaPool);
      });
      afterAll(async () => {
        await prisma?.$disconnect();
        await prismaPool?.end().catch(() => {});
      });

      it("claims through a PrismaClient, and commits a transactional step inside a Prisma interactive transaction", async () => {
        const effects = createEffects({ db: prisma, registry: new Registry(), logger: silentLogger(), rollups: false });
        const id = uniq("order");
        const read = await order(id);
        const key = uniq("capture:order");
        let captures = 0;
        expect((await effects.once({ tenant: "acme", key, jobType: "j" }, () => ({ n: ++captures }))).outcome).toEqual({ n: 1 });
        expect((await effects.once({ tenant: "acme", key, jobType: "j" }, () => ({ n: ++captures }))).outcome).toEqual({ n: 1 });
        expect(captures).toBe(1);

        const paid = () =>
          effects.job({ tenant: "acme", jobType: "order.paid" }, (job) =>
            job.transaction(`mark-paid:${id}`, async (tx) => {
              await tx.$executeRaw`UPDATE orders SET paid_count = paid_count + 1 WHERE id = ${id}`;
              return "paid";
            }),
          );
        expect((await paid()).steps[0]?.result).toBe("ran");
        expect((await paid()).steps[0]?.result).toBe("duplicate");
        expect((await read())?.paid_count).toBe(1);
      });

      it("joins a caller's Prisma interactive transaction and rolls back with it", async () => {
        const effects = createEffects({ db: prisma, registry: new Registry(), logger: silentLogger(), rollups: false });
        const id = uniq("order");
        const read = await order(id);
        const key = `mark-paid:${id}`;
        await prisma
          .$transaction(async (tx) => {
            await effects.once({ tenant: "acme", key, jobType: "j", policy: "transactional", tx }, async (_c, t) => {
              await t!.$executeRaw`UPDATE orders SET paid_count = paid_count + 1 WHERE id = ${id}`;
            });
            throw new Error("caller aborts");
          })
          .catch(() => {});
        expect(await effectCount(key)).toBe(0);
        expect((await read())?.paid_count).toBe(0);
      });

      it("maps the isolation refusal through Prisma too", async () => {
        const effects = createEffects({ db: prisma, registry: new Registry(), logger: silentLogger(), rollups: false });
        const error = await prisma
          .$transaction(
            (tx) =>
              effects.once({ tenant: "acme", key: uniq("mark-paid:o"), jobType: "j", policy: "transactional", tx }, () => 1),
            { isolationLevel: "Serializable" },
          )
          .catch((e) => e);
        expect(error).toBeInstanceOf(IsolationLevelError);
        expect(error.isolationLevel).toBe("serializable");
      });
    });
  },
  { poolSize: 10, setup: createProviderTables, engines: ENGINES_AND_DRIVERS },
);
