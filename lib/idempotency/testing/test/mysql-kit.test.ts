import type mysql from "mysql2/promise";
import { describe, expect, it } from "vitest";
import { withEachEngine } from "../../test/engine-suite";
import type { EngineDatabase } from "../../test/engines";
import { createProviderTables, providerCapture } from "../../test/helpers";
import { type CheckIdempotentOptions, checkIdempotent, formatReport } from "../index";

/**
 * The test kit against a handler on MariaDB: the kit's deliveries run on mysql2 pools, its crashes
 * KILL their connections (an open transaction rolls back), and its state comparison reads the
 * user's tables. A handler built on the library passes every scenario; a check-then-act one is
 * flagged, as on PostgreSQL (lib/demo/kit-examples/kit.test.ts).
 */
let db: EngineDatabase;

interface Order {
  orderId: string;
}

type Handler = CheckIdempotentOptions<Order, mysql.Pool>["handler"];

/** Charge (external, keyed at the fake provider), mark paid (transactional), send a receipt (at most once). */
const libraryHandler: Handler = async (m, ctx) => {
  await ctx.effects.job({ tenant: "acme", jobType: "order.paid", ...ctx.delivery }, async (job) => {
    const charge = await job.external(`capture:${m.orderId}`, (claim) =>
      providerCapture(ctx.db, m.orderId, 1299, claim.providerKey),
    );
    await job.transaction(`mark-paid:${m.orderId}`, async (tx) => {
      await tx.query("UPDATE orders SET status = 'paid', paid_count = paid_count + 1, charge_id = ? WHERE id = ?", [
        charge.id,
        m.orderId,
      ]);
    });
    await job.atMostOnce(`receipt:${m.orderId}`, async () => {
      await ctx.db.query("INSERT INTO sent_mail (order_id, kind) VALUES (?, 'receipt')", [m.orderId]);
    });
  });
};

/** The status flag checked first, then acted on: charges twice when delivered twice at once. */
const checkThenAct: Handler = async (m, ctx) => {
  const [rows] = await ctx.db.query("SELECT status FROM orders WHERE id = ?", [m.orderId]);
  if ((rows as { status: string }[])[0]?.status === "paid") return;
  const charge = await providerCapture(ctx.db, m.orderId, 1299, null);
  await ctx.db.query("UPDATE orders SET status = 'paid', paid_count = paid_count + 1, charge_id = ? WHERE id = ?", [
    charge.id,
    m.orderId,
  ]);
};

function options(orderId: string, handler: Handler): CheckIdempotentOptions<Order, mysql.Pool> {
  return {
    databaseUrl: db.url,
    effects: { schema: db.schema, wait: "10s" },
    message: { orderId },
    handler,
    async setup(pool) {
      for (const table of ["fake_provider_charges", "fake_provider_requests", "sent_mail"]) {
        await pool.query(`DELETE FROM ${table} WHERE order_id = ?`, [orderId]);
      }
      await pool.query("DELETE FROM orders WHERE id = ?", [orderId]);
      await pool.query("INSERT INTO orders (id) VALUES (?)", [orderId]);
    },
    async observe(pool) {
      const [order] = await pool.query("SELECT status, paid_count FROM orders WHERE id = ?", [orderId]);
      const [charges] = await pool.query("SELECT cents FROM fake_provider_charges WHERE order_id = ?", [orderId]);
      const [mail] = await pool.query("SELECT kind FROM sent_mail WHERE order_id = ?", [orderId]);
      return { order, charges, mail };
    },
  };
}

withEachEngine(
  (made) => {
    if (made) db = made;
  },
  () =>
    describe("checkIdempotent on MariaDB", () => {
      it("passes a handler built on the library in every scenario, crashes at each step boundary included", async () => {
        const report = await checkIdempotent(options("kit-my-1", libraryHandler));
        expect(report.ok, formatReport(report, { all: true })).toBe(true);
        expect(report.steps.map((s) => s.step)).toEqual(["capture:kit-my-1", "mark-paid:kit-my-1", "receipt:kit-my-1"]);
        expect(report.reference).toEqual({
          order: [{ status: "paid", paid_count: 1 }],
          charges: [{ cents: 1299 }],
          mail: [{ kind: "receipt" }],
        });
        const names = report.scenarios.map((s) => s.name);
        for (const name of ["once", "twice", "concurrent", "republished"]) expect(names).toContain(name);
        expect(report.scenarios.filter((s) => s.kind === "crash").length).toBeGreaterThanOrEqual(3);
      }, 120_000);

      it("flags a check-then-act handler", async () => {
        const report = await checkIdempotent({ ...options("kit-my-2", checkThenAct), scenarios: ["concurrent"] });
        expect(report.ok).toBe(false);
        const concurrent = report.scenarios.find((s) => s.kind === "concurrent");
        expect(concurrent?.equal).toBe(false);
      }, 120_000);
    }),
  { poolSize: 4, engines: ["mariadb"], setup: createProviderTables },
);
