import { parseArgs } from "node:util";
import { loadConfig } from "../lib/config";
import { exitWithParent } from "../lib/db/process-alive";
import { demoProviderEndpointsFromEnv, demoProviderFaults, startDemoProviderServers } from "../lib/demo/provider";
import { demoSettingsForChild } from "../lib/demo/settings";
import { log, runMain } from "./cli";

/**
 * The demo's provider process (started by `npm start` through lib/demo/supervisor.ts): the
 * Stripe-compatible server and the mailer, on the ports the supervisor chose, with their own
 * storage. The demo's workers call it through the `stripe` client; the console reconciles with it.
 */
runMain(async () => {
  const { values } = parseArgs({ options: { "parent-pid": { type: "string" } }, strict: true });
  const config = loadConfig();
  if (!config.DATABASE_URL) throw new Error("demo-provider needs DATABASE_URL (npm start provides it)");
  const endpoints = demoProviderEndpointsFromEnv();
  const settings = demoSettingsForChild();
  const servers = await startDemoProviderServers({
    databaseUrl: config.DATABASE_URL,
    apiKey: endpoints.apiKey,
    stripePort: endpoints.stripePort,
    mailerPort: Number(new URL(endpoints.mailerUrl).port),
    faults: demoProviderFaults(settings),
  });
  log(
    `demo provider (pid ${process.pid}): Stripe-compatible API at http://127.0.0.1:${servers.stripe.port}, mailer at ${servers.mailer.url}`,
  );
  const stop = async () => {
    await servers.close().catch(() => {});
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
  exitWithParent(values["parent-pid"] ? Number(values["parent-pid"]) : undefined, () => void stop());
});
