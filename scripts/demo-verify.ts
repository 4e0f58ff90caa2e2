import { parseArgs } from "node:util";
import pg from "pg";
import { loadConfig } from "../lib/config";
import { consolePoolConfig } from "../lib/db/pool";
import { newDemoApiKey, startDemoProviderServers } from "../lib/demo/provider";
import { demoProvidersFile, MAILER_MAPPING } from "../lib/demo/providers-file";
import { compareWithPlanted, formatTruth } from "../lib/demo/reconciliation-truth";
import { DEMO_STORES, type DemoStore, demoSettingsFromEnv } from "../lib/demo/settings";
import { demoMariadbUrl, mariadbShop, type Shop, shopTablesPresent } from "../lib/demo/shop";
import { formatReport, verifyDemo } from "../lib/demo/verify";
import { formatCountOf } from "../lib/format";
import { HttpJsonAdapter } from "../lib/reconciliation/http-json";
import { parseProviders } from "../lib/reconciliation/providers";
import { reconcile } from "../lib/reconciliation/reconcile";
import { StripeAdapter, stripeClient } from "../lib/reconciliation/stripe";
import { log, runMain } from "./cli";
import { openDemoDatabase } from "./demo-database";

const USAGE = "usage: npm run demo:verify [-- --grace <seconds>] [--store postgres|mariadb]";

/**
 * `npm run demo:verify`: the demo's invariants, per tenant; then the reconciliation's ground truth:
 * the live demo's window (from its first effect to `--grace` seconds ago) reconciled with the
 * demo's provider and mailer, through the `stripe` client and the HTTP+JSON adapter, and the
 * findings compared kind by kind with what the demo planted. Last line:
 * `reconciliation … reconciliation_mismatches=<n>`. Exits 1 on a double capture, a lost order or
 * a mismatch. `--store mariadb` (or DEMO_STORE=mariadb): the demo ran on MariaDB (`npm start -- --store
 * mariadb`), its shop's tables and effects are in MARIADB_URL's database; the books are checked the
 * same way, and the reconciliation is not run (the reconciler reads effects from PostgreSQL).
 */
runMain(async () => {
  let grace = 120;
  let store: DemoStore;
  try {
    const { values } = parseArgs({ options: { grace: { type: "string" }, store: { type: "string" } }, strict: true });
    if (values.grace !== undefined) {
      grace = Number(values.grace);
      if (!/^\d+$/.test(values.grace))
        throw new Error(`--grace must be a whole number of seconds (got ${JSON.stringify(values.grace)})`);
    }
    if (values.store !== undefined && !(DEMO_STORES as readonly string[]).includes(values.store)) {
      throw new Error(`--store must be postgres or mariadb (got ${JSON.stringify(values.store)})`);
    }
    store = (values.store as DemoStore | undefined) ?? demoSettingsFromEnv(process.env).store;
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  }
  const config = loadConfig();
  const db = await openDemoDatabase(log);
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const shop: Shop | undefined = store === "mariadb" ? mariadbShop(demoMariadbUrl(config.MARIADB_URL), { max: 2 }) : undefined;
  let ok = false;
  try {
    const present = shop
      ? await shopTablesPresent(shop)
      : (await client.query<{ present: boolean }>("SELECT to_regclass('demo_orders') IS NOT NULL AS present")).rows[0]?.present;
    if (!present) {
      throw new Error(
        `no demo in ${shop ? shop.describe : "this database"}: its tables are gone (npm run demo:reset removes them, npm start without --no-demo makes them)`,
      );
    }
    const report = await verifyDemo(client, { graceSeconds: grace, shop });
    for (const line of formatReport(report)) process.stdout.write(`${line}\n`);
    ok = report.ok;
    if (shop) {
      process.stdout.write(
        `reconciliation: not run: the demo's effects are on MariaDB (${shop.describe}) and the reconciler reads them from PostgreSQL\n`,
      );
      return;
    }

    const { rows: span } = await client.query<{ from: Date | null; to: Date }>(
      `SELECT date_trunc('second', min(created_at)) AS from, now() - $1 * interval '1 second' AS to
         FROM effects WHERE marked AND owner IS DISTINCT FROM 'history'`,
      [grace],
    );
    const window = { from: span[0]?.from ?? null, to: span[0]!.to };
    if (!window.from || !(window.from < window.to)) {
      process.stdout.write(`reconciliation: no live demo effects older than ${grace} s yet reconciliation_mismatches=0\n`);
    } else {
      ok =
        (await verifyReconciliation(client, db.url, config.ONCEBOARD_SCHEMA, { from: window.from, to: window.to }, grace)) && ok;
    }
  } finally {
    await shop?.close();
    await client.end().catch(() => {});
    await db.stop();
    if (!ok) process.exitCode = 1;
  }
});

async function verifyReconciliation(
  client: pg.Client,
  url: string,
  schema: string,
  window: { from: Date; to: Date },
  grace: number,
): Promise<boolean> {
  // The provider's storage, served by a provider process of our own (no faults: it only answers
  // lists), so this works whether or not npm start is running.
  const apiKey = newDemoApiKey();
  const servers = await startDemoProviderServers({ databaseUrl: url, apiKey });
  const pool = new pg.Pool(
    consolePoolConfig({
      connectionString: url,
      schema,
      statementTimeoutMs: null,
      max: 2,
      application_name: "onceboard-demo-verify",
    }),
  );
  try {
    // The same providers the console reads from the file the demo writes for it.
    const providers = parseProviders(demoProvidersFile({ mailerUrl: servers.mailer.url }), "the demo's providers", {
      STRIPE_API_KEY: apiKey,
    });
    const stripe = stripeClient({
      STRIPE_API_KEY: apiKey,
      STRIPE_HOST: "127.0.0.1",
      STRIPE_PORT: servers.stripe.port,
      STRIPE_PROTOCOL: "http",
    });
    const runs: number[] = [];
    const tty = process.stderr.isTTY;
    for (const [name, adapter] of [
      ["stripe", new StripeAdapter(stripe)],
      ["mailer", new HttpJsonAdapter("mailer", servers.mailer.url, MAILER_MAPPING)],
    ] as const) {
      const result = await reconcile({
        pool,
        adapter,
        provider: providers.find((p) => p.name === name)!,
        window,
        graceSeconds: grace,
        trigger: "manual",
        requestedBy: "demo:verify",
        // A counter that rewrites itself on a terminal; elsewhere one line per run, not one per page.
        onProgress: ({ objects }) => {
          if (tty) process.stderr.write(`\rreconciling ${name}: ${formatCountOf(objects, "object")}`);
        },
      });
      process.stderr.write(`${tty ? "\r" : ""}reconciled ${name}: ${formatCountOf(result.objectsSeen, "object")}\n`);
      if (result.status === "failed") throw new Error(`the reconciliation of ${name} failed: ${result.error}`);
      runs.push(result.runId);
    }
    const truth = await compareWithPlanted(client, window, runs);
    for (const line of formatTruth(truth, window)) process.stdout.write(`${line}\n`);
    return truth.mismatches === 0;
  } finally {
    await pool.end().catch(() => {});
    await servers.close().catch(() => {});
  }
}
