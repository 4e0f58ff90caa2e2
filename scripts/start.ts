import type { ChildProcess } from "node:child_process";
import { parseArgs } from "node:util";
import { loadConfig } from "../lib/config";
import { assertPortFree } from "../lib/db/free-port";
import { provisionDatabase } from "../lib/db/provision";
import { log, runMain } from "./cli";
import { buildConsole, hasProductionBuild, serveConsole } from "./next-server";

/**
 * `npm start` / `npm run dev`: Postgres (embedded unless DATABASE_URL), migrations, partitions,
 * then the console. Everything started here is stopped on SIGINT/SIGTERM.
 */
runMain(async () => {
  const { values } = parseArgs({
    options: {
      dev: { type: "boolean", default: false },
      rebuild: { type: "boolean", default: false },
    },
    allowPositionals: false,
    strict: false,
  });
  const config = loadConfig();
  await assertPortFree(config.PORT);
  const db = await provisionDatabase({ log });
  const children: ChildProcess[] = [];
  let shuttingDown = false;
  const shutdown = async (code: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    log("shutting down");
    for (const child of children) child.kill("SIGTERM");
    await db.stop().catch(() => {});
    process.exit(code);
  };
  process.on("SIGINT", () => void shutdown(0));
  process.on("SIGTERM", () => void shutdown(0));

  try {
    const env = { DATABASE_URL: db.url, PORT: String(config.PORT) };
    const mode = values.dev ? "dev" : "start";
    if (mode === "start" && (values.rebuild || !hasProductionBuild())) {
      log("building the console (first start only)");
      await buildConsole(env);
    }
    const server = await serveConsole({ mode, port: config.PORT, env });
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
    throw error;
  }
});
