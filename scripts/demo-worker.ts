import { parseArgs } from "node:util";
import { loadConfig } from "../lib/config";
import { exitWithParent } from "../lib/db/process-alive";
import { demoSettingsForChild } from "../lib/demo/settings";
import { startDemoWorker } from "../lib/demo/worker";
import { log, runMain } from "./cli";

/** One demo worker process (started by `npm start` through lib/demo/supervisor.ts). */
runMain(async () => {
  const { values } = parseArgs({
    options: {
      index: { type: "string", default: "0" },
      "metrics-port": { type: "string", default: "0" },
      "parent-pid": { type: "string" },
    },
    strict: true,
  });
  const config = loadConfig();
  if (!config.DATABASE_URL) throw new Error("demo-worker needs DATABASE_URL (npm start provides it)");
  const worker = await startDemoWorker({
    url: config.DATABASE_URL,
    index: Number(values.index),
    metricsPort: Number(values["metrics-port"]),
    settings: demoSettingsForChild(),
    brokerUrls: { rabbitmq: config.RABBITMQ_URL, nats: config.NATS_URL },
    log,
    logLevel: config.DEMO_LOG_LEVEL,
  });
  const stop = async () => {
    await worker.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
  exitWithParent(values["parent-pid"] ? Number(values["parent-pid"]) : undefined, () => void stop());
});
