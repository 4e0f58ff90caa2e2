import { sql as drizzleSql } from "drizzle-orm";
import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import { CamelCasePlugin, Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { NotInTransactionError } from "../errors";
import type { JobDelivery } from "../index";
import { eachCoalescing, PROVIDER_DDL, testEffects } from "./helpers";

/**
 * Transactional steps in the caller's own transaction object, for each client teams write their
 * SQL with: the claim runs on that object, so it commits, rolls back and fails with their writes.
 */

let db: TestDatabase;
let clientPool: pg.Pool;
let drizzleDb: NodePgDatabase;
interface Tables {
  orders: { id: string; status: string; paidCount: number };
  fakeProviderCharges: { idempotencyKey: string; orderId: string; cents: number; chargeId: string };
}
let kysely: Kysely<Tables>;
let pgjs: postgres.Sql;
let n = 0;
const uniq = (prefix: string) => `${prefix}-${++n}-${Math.random().toString(36).slice(2, 7)}`;

beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 6 });
  await db.pool.query(PROVIDER_DDL);
  clientPool = new pg.Pool({ connectionString: db.sqlUrl, max: 4 });
  clientPool.on("error", () => {});
  drizzleDb = drizzle({ client: clientPool });
  // With CamelCasePlugin, as Kysely apps often run: the library's own statements must not be renamed by it.
  kysely = new Kysely<Tables>({ dialect: new PostgresDialect({ pool: clientPool }), plugins: [new CamelCasePlugin()] });
  pgjs = postgres(db.sqlUrl, { max: 4, onnotice: () => {} });
});
afterAll(async () => {
  await pgjs?.end();
  await clientPool?.end().catch(() => {});
  await db?.drop();
});

/** What each client does in a test: open its own transaction, write in it, break a unique key in it. */
interface ClientUnderTest<Tx> {
  name: string;
  begin<R>(fn: (tx: Tx) => Promise<R>): Promise<R>;
  markPaid(tx: Tx, id: string): Promise<unknown>;
  /** Inserts a charge under an idempotency key already taken: fake_provider_charges_pkey. */
  chargeAgain(tx: Tx, id: string, idempotencyKey: string): Promise<unknown>;
  /** The client's handle outside any transaction. */
  topLevel(): unknown;
}

const drizzleClient: ClientUnderTest<Parameters<Parameters<NodePgDatabase["transaction"]>[0]>[0]> = {
  name: "Drizzle (node-postgres)",
  begin: (fn) => drizzleDb.transaction(fn),
  markPaid: (tx, id) => tx.execute(drizzleSql`UPDATE orders SET status = 'paid', paid_count = paid_count + 1 WHERE id = ${id}`),
  chargeAgain: (tx, id, key) =>
    tx.execute(
      drizzleSql`INSERT INTO fake_provider_charges (idempotency_key, order_id, cents, charge_id) VALUES (${key}, ${id}, 100, 'ch_2')`,
    ),
  topLevel: () => drizzleDb,
};

const kyselyClient: ClientUnderTest<Parameters<Parameters<ReturnType<Kysely<Tables>["transaction"]>["execute"]>[0]>[0]> = {
  name: "Kysely (PostgresDialect over pg)",
  begin: (fn) => kysely.transaction().execute(fn),
  markPaid: (trx, id) =>
    trx
      .updateTable("orders")
      .set((eb) => ({ status: "paid", paidCount: eb("paidCount", "+", 1) }))
      .where("id", "=", id)
      .execute(),
  chargeAgain: (trx, id, key) =>
    trx.insertInto("fakeProviderCharges").values({ idempotencyKey: key, orderId: id, cents: 100, chargeId: "ch_2" }).execute(),
  topLevel: () => kysely,
};

const postgresJsClient: ClientUnderTest<postgres.TransactionSql> = {
  name: "postgres.js",
  begin: <R>(fn: (tx: postgres.TransactionSql) => Promise<R>) => pgjs.begin((tx) => fn(tx)) as Promise<R>,
  markPaid: (tx, id) => tx`UPDATE orders SET status = 'paid', paid_count = paid_count + 1 WHERE id = ${id}`,
  chargeAgain: (tx, id, key) =>
    tx`INSERT INTO fake_provider_charges (idempotency_key, order_id, cents, charge_id) VALUES (${key}, ${id}, 100, 'ch_2')`,
  topLevel: () => pgjs,
};

async function order(id: string) {
  await db.pool.query("INSERT INTO orders (id) VALUES ($1) ON CONFLICT DO NOTHING", [id]);
  return async () => (await db.pool.query("SELECT status, paid_count FROM orders WHERE id = $1", [id])).rows[0];
}
const effectCount = async (key: string) =>
  (await db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM effects WHERE key = $1", [key])).rows[0]?.n;
const delivery = (): JobDelivery => ({ tenant: "acme", jobType: "order.paid", messageId: uniq("m") });

function clientSuite<Tx>(client: ClientUnderTest<Tx>) {
  describe(client.name, () => {
    eachCoalescing(() => {
      it("commits the claim with the handler's write in the caller's transaction; a duplicate does not run", async () => {
        const effects = testEffects(db.pool);
        const id = uniq("order");
        const read = await order(id);
        const key = `mark-paid:${id}`;
        let runs = 0;
        const deliver = () =>
          client.begin((tx) =>
            effects.job(delivery(), (job) =>
              job.transaction(
                key,
                async (stepTx) => {
                  expect(stepTx).toBe(tx); // the caller's own object, not a copy or the library's client
                  runs += 1;
                  await client.markPaid(stepTx, id);
                  return { paid: true };
                },
                { tx },
              ),
            ),
          );
        const first = await deliver();
        expect(first.steps[0]?.result).toBe("ran");
        expect(first.value).toEqual({ paid: true });
        const again = await deliver();
        expect(again.duplicate).toBe(true);
        expect(again.value).toEqual({ paid: true });
        expect(runs).toBe(1);
        expect(await read()).toEqual({ status: "paid", paid_count: 1 });
        expect(await effectCount(key)).toBe(1);
        await effects.close();
      });

      it("a rollback of the caller's transaction leaves no claim, and the next delivery runs the step", async () => {
        const effects = testEffects(db.pool);
        const id = uniq("order");
        const read = await order(id);
        const key = `mark-paid:${id}`;
        const deliver = (abort: boolean) =>
          client.begin(async (tx) => {
            const result = await effects.once(
              { tenant: "acme", key, jobType: "order.paid", policy: "transactional", tx },
              async (_claim, stepTx) => {
                await client.markPaid(stepTx as Tx, id);
                return "paid";
              },
            );
            if (abort) throw new Error("the caller's own later write failed");
            return result;
          });
        await expect(deliver(true)).rejects.toThrow("the caller's own later write failed");
        expect(await effectCount(key)).toBe(0);
        expect((await read()).paid_count).toBe(0);
        expect((await deliver(false)).result).toBe("ran");
        expect((await deliver(false)).result).toBe("duplicate");
        expect(await read()).toEqual({ status: "paid", paid_count: 1 });
        await effects.close();
      });

      it("records the handler's own unique violation as uncaught, with its constraint, and rethrows it", async () => {
        const effects = testEffects(db.pool);
        const id = uniq("order");
        const chargeKey = uniq("charge");
        await db.pool.query(
          "INSERT INTO fake_provider_charges (idempotency_key, order_id, cents, charge_id) VALUES ($1, $2, 100, 'ch_1')",
          [chargeKey, id],
        );
        const key = `charge:${id}`;
        let thrown: unknown;
        const error = await client
          .begin((tx) =>
            effects.job(delivery(), (job) =>
              job.transaction(
                key,
                async (stepTx) => {
                  try {
                    await client.chargeAgain(stepTx, id, chargeKey);
                  } catch (e) {
                    thrown = e;
                    throw e;
                  }
                },
                { tx },
              ),
            ),
          )
          .catch((e: unknown) => e);
        expect(thrown).toBeDefined();
        expect(error).toBe(thrown); // rethrown as the client threw it
        const { rows } = await db.pool.query(
          "SELECT constraint_name, tenant_id, job_type FROM uncaught_violation_keys WHERE key = $1",
          [key],
        );
        expect(rows).toEqual([{ constraint_name: "fake_provider_charges_pkey", tenant_id: "acme", job_type: "order.paid" }]);
        expect(await effectCount(key)).toBe(0);
        await effects.close();
      });

      it("refuses the client's top-level handle: it is not a transaction", async () => {
        const effects = testEffects(db.pool);
        const key = uniq("mark-paid:order");
        await expect(
          effects.once(
            { tenant: "acme", key, jobType: "order.paid", policy: "transactional", tx: client.topLevel() as never },
            () => 1,
          ),
        ).rejects.toBeInstanceOf(NotInTransactionError);
        expect(await effectCount(key)).toBe(0);
        await effects.close();
      });
    });
  });
}

clientSuite(drizzleClient);
clientSuite(kyselyClient);
clientSuite(postgresJsClient);
