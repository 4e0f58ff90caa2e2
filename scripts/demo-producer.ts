import { parseArgs } from "node:util";
import { loadConfig } from "../lib/config";
import { exitWithParent } from "../lib/db/process-alive";
import { startDemoProducer } from "../lib/demo/producer";
import { demoSettingsForChild } from "../lib/demo/settings";
import { log, runMain } from "./cli";

/** The demo's producer process (started by `npm start` through lib/demo/supervisor.ts). */
runMain(async () => {
  const { values } = parseArgs({ options: { "parent-pid": { type: "string" } }, strict: true });
  const config = loadConfig();
  if (!config.DATABASE_URL) throw new Error("demo-producer needs DATABASE_URL (npm start provides it)");
  const settings = demoSettingsForChild();
  const producer = await startDemoProducer({
    url: config.DATABASE_URL,
    settings,
    brokerUrls: { rabbitmq: config.RABBITMQ_URL, nats: config.NATS_URL },
    log,
  });
  log(
    `demo producer (pid ${process.pid}): ${settings.rate} orders/s across 3 tenants on ${settings.broker}, duplicates and faults on`,
  );
  const stop = async () => {
    await producer.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
  exitWithParent(values["parent-pid"] ? Number(values["parent-pid"]) : undefined, () => void stop());
});
