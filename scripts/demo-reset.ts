import { parseArgs } from "node:util";
import pg from "pg";
import { loadConfig } from "../lib/config";
import { removeDemoBrokerQueues } from "../lib/demo/broker";
import { resetDemo } from "../lib/demo/reset";
import { formatCountOf } from "../lib/format";
import { log, runMain } from "./cli";
import { openDemoDatabase } from "./demo-database";

/** `npm run demo:reset`: removes exactly the demo's data (rows marked demo, the demo tables, its pg-boss schema). */
runMain(async () => {
  try {
    parseArgs({ options: {}, strict: true });
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\nusage: npm run demo:reset`);
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
    const config = loadConfig();
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
