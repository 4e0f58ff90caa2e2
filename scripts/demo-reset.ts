import { parseArgs } from "node:util";
import pg from "pg";
import { loadConfig } from "../lib/config";
import { removeDemoBrokerQueues } from "../lib/demo/broker";
import { resetDemo, resetMariadbDemo } from "../lib/demo/reset";
import { DEMO_STORES, type DemoStore, demoSettingsFromEnv } from "../lib/demo/settings";
import { demoMariadbUrl, mariadbShop } from "../lib/demo/shop";
import { formatCountOf } from "../lib/format";
import { log, runMain } from "./cli";
import { openDemoDatabase } from "./demo-database";

const USAGE = "usage: npm run demo:reset [-- --store postgres|mariadb]";

/**
 * `npm run demo:reset`: removes exactly the demo's data (rows marked demo, the demo tables, its
 * pg-boss schema). `--store mariadb` (or DEMO_STORE=mariadb): the demo's MariaDB database too (its
 * marked rows and shop tables), for a demo started with `npm start -- --store mariadb`.
 */
runMain(async () => {
  let store: DemoStore;
  try {
    const { values } = parseArgs({ options: { store: { type: "string" } }, strict: true });
    if (values.store !== undefined && !(DEMO_STORES as readonly string[]).includes(values.store)) {
      throw new Error(`--store must be postgres or mariadb (got ${JSON.stringify(values.store)})`);
    }
    store = (values.store as DemoStore | undefined) ?? demoSettingsFromEnv(process.env).store;
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  }
  const config = loadConfig();
  if (store === "mariadb") {
    // One connection: resetMariadbDemo refuses while any other session uses the database.
    const shop = mariadbShop(demoMariadbUrl(config.MARIADB_URL), { max: 1 });
    try {
      const r = await resetMariadbDemo(shop);
      log(
        `demo data removed from ${shop.describe}: ${formatCountOf(r.effects, "effect")}, ${formatCountOf(r.rollupRows, "rollup row")}, ${formatCountOf(r.violationRows, "violation row")}, ${formatCountOf(r.orders, "order")}`,
      );
    } catch (error) {
      // No database: the demo never ran on this MariaDB, or a reset dropped more than it does.
      if ((error as { errno?: number }).errno !== 1049) throw error;
      log(`no demo on MariaDB: ${shop.describe} does not exist`);
    } finally {
      await shop.close();
    }
  }
  const db = await openDemoDatabase(log);
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const r = await resetDemo(client);
    log(
      `demo data removed: ${formatCountOf(r.effects, "effect")}, ${formatCountOf(r.rollupRows, "rollup row")}, ${formatCountOf(r.violationRows, "violation row")}, ${formatCountOf(r.orders, "order")} (and the demo queues)`,
    );
    // The demo on BullMQ, RabbitMQ or NATS (--broker) left its queues there, holding jobs for the orders just removed.
    const removed = await removeDemoBrokerQueues(db.url, {
      rabbitmq: config.RABBITMQ_URL,
      nats: config.NATS_URL,
      redis: config.REDIS_URL,
    });
    if (removed.length > 0) log(`demo broker queues removed: ${removed.join(", ")}`);
  } finally {
    await client.end().catch(() => {});
    await db.stop();
  }
});
