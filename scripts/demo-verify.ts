import { parseArgs } from "node:util";
import pg from "pg";
import { formatReport, verifyDemo } from "../lib/demo/verify";
import { log, runMain } from "./cli";
import { openDemoDatabase } from "./demo-database";

const USAGE = "usage: npm run demo:verify [-- --grace <seconds>]";

/** `npm run demo:verify`: the demo's invariants, per tenant; exits 1 on a double capture or a lost order. */
runMain(async () => {
  let grace = 120;
  try {
    const { values } = parseArgs({ options: { grace: { type: "string" } }, strict: true });
    if (values.grace !== undefined) {
      grace = Number(values.grace);
      if (!/^\d+$/.test(values.grace))
        throw new Error(`--grace must be a whole number of seconds (got ${JSON.stringify(values.grace)})`);
    }
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  }
  const db = await openDemoDatabase(log);
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  let ok = false;
  try {
    const { rows } = await client.query<{ present: boolean }>(
      "SELECT to_regclass('demo_provider_ledger') IS NOT NULL AS present",
    );
    if (!rows[0]?.present) {
      throw new Error(
        "no demo in this database: its tables are gone (npm run demo:reset removes them, npm start without --no-demo makes them)",
      );
    }
    const report = await verifyDemo(client, { graceSeconds: grace });
    for (const line of formatReport(report)) process.stdout.write(`${line}\n`);
    ok = report.ok;
  } finally {
    await client.end().catch(() => {});
    await db.stop();
  }
  if (!ok) process.exit(1);
});
