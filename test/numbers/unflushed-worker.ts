/**
 * Child process for one-source.test.ts, a worker of a second system (not the demo): it claims
 * `UNFLUSHED_ORDERS` invoices, delivers each twice (a suppression), hits an uncaught unique
 * violation on every third, then says DONE and waits to be SIGKILLed mid-minute. Its rollups are
 * never flushed (no timer, no close), as a worker killed between two flushes; its registration
 * stays behind, as a killed worker's does.
 */
import pg from "pg";
import { Registry } from "prom-client";
import { createEffects } from "../../lib/idempotency";
import { silentLogger } from "../../lib/idempotency/test/helpers";

const url = process.env.UNFLUSHED_DATABASE_URL;
const tenant = process.env.UNFLUSHED_TENANT;
const prefix = process.env.UNFLUSHED_PREFIX;
const orders = Number(process.env.UNFLUSHED_ORDERS);
if (!url || !tenant || !prefix || !Number.isInteger(orders)) throw new Error("UNFLUSHED_* variables are required");

const pool = new pg.Pool({ connectionString: url, max: 3 });
const effects = createEffects({ db: pool, registry: new Registry(), logger: silentLogger(), flushInterval: 0 });
await effects.ready();
for (let i = 0; i < orders; i++) {
  const key = `invoice-issue:${prefix}-${i}`;
  const violates = i % 3 === 0;
  for (const attempt of [1, 2]) {
    await effects
      .once({ tenant, key, jobType: "billing.issue_invoice", messageId: `${prefix}-m${i}`, attempt }, () =>
        violates
          ? pool.query("INSERT INTO invoice_numbers (number) VALUES ($1), ($1)", [`${prefix}-${i}`])
          : pool.query("INSERT INTO invoice_numbers (number) VALUES ($1)", [`${prefix}-${i}`]),
      )
      .catch((error: unknown) => {
        if ((error as { code?: string }).code !== "23505") throw error;
      });
  }
}
process.stdout.write("DONE\n");
await new Promise(() => {}); // wait to be killed
