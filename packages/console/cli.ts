import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { ensureBootstrapAdmin } from "../../lib/auth/bootstrap";
import { isLoopbackHost, loadConfig } from "../../lib/config";
import { assertPortFree } from "../../lib/db/free-port";
import { createPrismaClient } from "../../lib/db/prisma";
import { provisionDatabase } from "../../lib/db/provision";
import { log, runMain } from "../../scripts/cli";
import { probeHost } from "../../scripts/next-server";

/**
 * `onceboard-console` (the @onceboard/console package): the console on the user's own PostgreSQL,
 * from a prebuilt Next.js standalone server, with no build and no demo. Migrates DATABASE_URL as
 * `npm start` does (lib/db/provision.ts: the library's schema, the console's tables, the console
 * role's grants, the startup partitions), prints a one-time login link on a database without
 * tokens, then serves scripts/console-server.ts (bundled beside this file) until it is stopped.
 *
 * Bundled by packages/console/pack.mjs into server/cli.mjs, where the server's own files mirror
 * this repository's layout (server/prisma/migrations, server/lib/idempotency/migrations).
 */
// The server's root: this file's place in the repository's layout, which the package mirrors.
const SERVER_DIR = path.resolve(import.meta.dirname, "../..");
const { version } = JSON.parse(fs.readFileSync(path.join(SERVER_DIR, "..", "package.json"), "utf8")) as { version: string };

const HELP = `onceboard-console ${version}: the Onceboard console, against your PostgreSQL

usage: DATABASE_URL=postgresql://… npx @onceboard/console [--port <n>] [--host <address>]
       npx @onceboard/console --help | --version

Applies the migrations (the worker library's schema and the console's tables) to DATABASE_URL,
then serves the console. On a database without any API token it creates a platform admin token
and prints a one-time login link for it (24 h).

flags:
  -p, --port <n>         port to listen on (default: PORT, else 3000)
  -H, --host <address>   address to listen on (default: HOST, else 127.0.0.1: this machine only;
                         0.0.0.0 for every interface)
  --migrate-only         apply the migrations, print the login link, and exit
  -h, --help             this text
  -v, --version          the package's version

environment:
  DATABASE_URL           required: the PostgreSQL database to migrate and read (the owner's role)
  CONSOLE_DATABASE_URL   the role the console reads and writes with, when not DATABASE_URL's
  ONCEBOARD_SCHEMA       the schema of the library's and the console's tables (default onceboard)
  ONCEBOARD_SECRET       signs session cookies (32+ characters); unset: one is generated and kept
                         in ONCEBOARD_DATA_DIR/session-secret
  ONCEBOARD_DATA_DIR     where that secret lives (default ./.onceboard)
  PROMETHEUS_URL, WORKER_METRICS_URLS, OIDC_*, STRIPE_*, RECONCILE_*, TRUSTED_PROXIES, LOG_LEVEL …
                         every other setting of the console, as documented in its README:
                         https://github.com/onceboard/onceboard#environment

Stop it with Ctrl-C (SIGINT) or SIGTERM. API tokens: the console's Tokens page (admin), or
POST /api/v1/tokens.`;

/**
 * On a database without tokens, a platform admin token and its one-time login link (as npm start
 * makes them, lib/auth/bootstrap.ts); otherwise how to get in, in this package's words.
 */
async function loginMessage(databaseUrl: string, baseUrl: string): Promise<string> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1, application_name: "onceboard-console-bootstrap" });
  pool.on("error", () => {});
  const prisma = createPrismaClient(pool);
  try {
    const made = await ensureBootstrapAdmin(baseUrl, prisma);
    if (!made) return "sign in with an API token of this database (an admin makes them on the console's Tokens page)";
    return `first start: created a platform admin token (id ${made.tokenId}). Sign in once with this link (valid until ${made.expiresAt.toISOString()}): ${made.url}`;
  } finally {
    await prisma.$disconnect().catch(() => {});
    await pool.end().catch(() => {});
  }
}

function parseFlags() {
  return parseArgs({
    options: {
      port: { type: "string", short: "p" },
      host: { type: "string", short: "H" },
      "migrate-only": { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
      version: { type: "boolean", short: "v", default: false },
    },
    strict: true,
  }).values;
}

runMain(async () => {
  let flags: ReturnType<typeof parseFlags>;
  try {
    flags = parseFlags();
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)} (onceboard-console --help lists the flags)`);
  }
  if (flags.help) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  if (flags.version) {
    process.stdout.write(`${version}\n`);
    return;
  }
  // The flags are settings like their variables: one validation (lib/config.ts) for both.
  if (flags.port !== undefined) process.env.PORT = flags.port;
  if (flags.host !== undefined) process.env.HOST = flags.host;
  const config = loadConfig();
  if (!config.DATABASE_URL) {
    // The embedded PostgreSQL of `npm start` is not shipped: the package serves your database.
    throw new Error("set DATABASE_URL to the PostgreSQL database the console should use (onceboard-console --help)");
  }
  // Before anything else: a server already on the port would answer the readiness probe below.
  if (!flags["migrate-only"]) await assertPortFree(config.PORT);
  const database = await provisionDatabase({ log });
  // As npm start shows it (scripts/start.ts): localhost on loopback, else a name others can reach.
  const wildcard = config.HOST === "0.0.0.0" || config.HOST === "::";
  const shown = isLoopbackHost(config.HOST) ? "localhost" : probeHost(wildcard ? os.hostname() : config.HOST);
  const baseUrl = `http://${shown}:${config.PORT}`;
  if (flags["migrate-only"]) {
    log(await loginMessage(database.url, baseUrl));
    return;
  }

  // The configuration the server was built with, as Next's own standalone server.js passes it:
  // next.config.js is not shipped, and loading one would need the build tooling.
  const { config: nextConfig } = JSON.parse(
    fs.readFileSync(path.join(SERVER_DIR, ".next", "required-server-files.json"), "utf8"),
  ) as { config: unknown };
  const server: ChildProcess = spawn(
    process.execPath,
    [path.join(SERVER_DIR, "console-server.mjs"), "-H", config.HOST, "-p", String(config.PORT)],
    {
      cwd: process.cwd(),
      stdio: "inherit",
      env: {
        ...process.env,
        NEXT_TELEMETRY_DISABLED: "1",
        __NEXT_PRIVATE_STANDALONE_CONFIG: JSON.stringify(nextConfig),
        DATABASE_URL: database.consoleUrl,
        // The console exits when this process is gone (lib/console/process-lifecycle.ts).
        ONCEBOARD_PARENT_PID: String(process.pid),
      },
    },
  );
  let stopping = false;
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => {
      stopping = true;
      server.kill("SIGTERM");
      // Next closes its connections first; a server that hangs is not waited for past 10 s.
      setTimeout(() => server.kill("SIGKILL"), 10_000).unref();
    });
  }
  server.on("exit", (code, signal) => {
    if (!stopping) log(`the console server exited (${signal ?? `code ${code}`})`);
    process.exit(stopping ? 0 : (code ?? 1));
  });
  // Said once the server answers, so the link is the last thing on the screen when it works.
  const deadline = Date.now() + 120_000;
  let answered = false;
  while (!answered && Date.now() < deadline && server.exitCode === null) {
    answered = await fetch(`http://${probeHost(config.HOST)}:${config.PORT}/api/v1/health`).then(
      () => true,
      () => false,
    );
    if (!answered) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  if (server.exitCode !== null) return; // its exit handler says why and exits
  log(
    answered ? `console ready at ${baseUrl}` : `the console has not answered on port ${config.PORT} within 120 s; still waiting`,
  );
  log(await loginMessage(database.url, baseUrl));
});
