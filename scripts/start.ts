import type { ChildProcess } from "node:child_process";
import { parseArgs } from "node:util";
import { loadConfig } from "../lib/config";
import { assertPortFree } from "../lib/db/free-port";
import { provisionDatabase } from "../lib/db/provision";
import { log, runMain } from "./cli";
import { buildConsole, hasProductionBuild, serveConsole } from "./next-server";
import { RunRegistry } from "./run-registry";

const USAGE = `usage: npm start [-- --no-demo] [--rebuild]   (npm run dev for the development server)`;

function parseFlags() {
  try {
    return parseArgs({
      options: {
        dev: { type: "boolean", default: false },
        rebuild: { type: "boolean", default: false },
        demo: { type: "boolean", default: true },
      },
      allowNegative: true,
      strict: true,
    }).values;
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
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
  const registry = new RunRegistry(config.ONCEBOARD_DATA_DIR);
  const reclaimed = await registry.reclaimLeftovers();
  if (reclaimed > 0) log(`stopped ${reclaimed} process(es) left running by a killed start`);
  await assertPortFree(config.PORT);
  registry.save();
  const db = await provisionDatabase({ log });
  const children: ChildProcess[] = [];
  let shuttingDown = false;
  const shutdown = async (code: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    log("shutting down");
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
  process.on("SIGINT", () => void shutdown(0));
  process.on("SIGTERM", () => void shutdown(0));

  try {
    const env = { DATABASE_URL: db.url, PORT: String(config.PORT) };
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
  } catch (error) {
    for (const child of children) child.kill("SIGTERM");
    await db.stop().catch(() => {});
    registry.clear();
    throw error;
  }
});
