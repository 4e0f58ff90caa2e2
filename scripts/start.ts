import type { ChildProcess } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { bootstrapLogin, bootstrapLoginReminder } from "../lib/auth/bootstrap";
import { loadRoleMapping } from "../lib/auth/oidc-roles";
import { CONSOLE_AUTHENTICATION_ENABLED, isLoopbackHost, loadConfig, loadWorkerMetricsUrls } from "../lib/config";
import { ensurePrivateDataDir } from "../lib/db/data-dir";
import { redactUrl } from "../lib/db/errors";
import { assertPortFree, findFreePort } from "../lib/db/free-port";
import { withSearchPath } from "../lib/db/pool";
import { type ProvisionedConsoleDatabase, provisionDatabase } from "../lib/db/provision";
import { giveSchemasToConsoleRole } from "../lib/db/roles";
import { backfillHistory, historyReadyLine, isDatabaseEmpty } from "../lib/demo/history";
import { type DemoProviderEndpoints, installDemoProviderSchema } from "../lib/demo/provider";
import { writeDemoProvidersFile } from "../lib/demo/providers-file";
import { DEMO_SCHEMA, installDemoSchema } from "../lib/demo/schema";
import { DEMO_BOSS_SCHEMA, DEMO_STORES, type DemoSettings, demoSettingsFromEnv, parseSpan } from "../lib/demo/settings";
import { demoMariadbUrl } from "../lib/demo/shop";
import { PROVIDER_SCHEMA } from "../lib/demo/stripe-storage";
import { type DemoProcesses, startDemoProcesses } from "../lib/demo/supervisor";
import { reconcileProviders } from "../lib/reconciliation/providers";
import { log, runMain } from "./cli";
import { buildConsole, hasProductionBuild, probeHost, serveConsole } from "./next-server";
import { RunRegistry } from "./run-registry";

const USAGE = `usage: npm start [-- --demo|--no-demo] [--broker pg-boss|bullmq|rabbitmq|nats] [--store postgres|mariadb] [--history 14d|off] [--rebuild]   (npm run dev for the development server)`;

function parseFlags() {
  try {
    return parseArgs({
      options: {
        dev: { type: "boolean", default: false },
        rebuild: { type: "boolean", default: false },
        // Unset: the demo runs on the embedded database only, never in the user's own (DATABASE_URL).
        demo: { type: "boolean" },
        history: { type: "string" },
        // The demo's broker (DEMO_BROKER too): pg-boss in the demo's database, or the machine's RabbitMQ / NATS.
        broker: { type: "string" },
        // The demo's effects store and shop tables (DEMO_STORE too): the demo's PostgreSQL, or MariaDB at MARIADB_URL.
        store: { type: "string" },
      },
      allowNegative: true,
      strict: true,
    }).values;
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)} (${USAGE})`);
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
 * then the console. Everything started here is stopped within 10 s on SIGINT, SIGTERM or SIGHUP,
 * and when the process that started us goes away (npm, SIGKILLed: we are re-parented); a run
 * killed outright has its leftovers stopped by the next start.
 *
 * The npm scripts `exec` this file, so the signal a process manager or terminal sends to npm's pid
 * (npm forwards it to its child) reaches this process rather than a `sh -c` that dies on it.
 */
const STOP_WITHIN_MS = 9_000;

/**
 * The reconciliation settings the console gets for the demo's provider: the demo's providers file
 * (which job types and steps Stripe and the mailer hold, written as a user writes theirs), the
 * server's port and key, and a pass every minute with a two-minute grace (production's defaults
 * are 5 and 15 minutes), so the disagreements it plants show on the Reconciliation page within minutes.
 */
function demoReconcileEnv(provider: DemoProviderEndpoints, dataDir: string): Record<string, string> {
  return {
    ONCEBOARD_PROVIDERS_FILE: writeDemoProvidersFile(dataDir, provider),
    STRIPE_API_KEY: provider.apiKey,
    STRIPE_HOST: "127.0.0.1",
    STRIPE_PORT: String(provider.stripePort),
    STRIPE_PROTOCOL: "http",
    RECONCILE_GRACE_SECONDS: "120",
    RECONCILE_INTERVAL_SECONDS: "60",
  };
}

runMain(async () => {
  const parsed = parseFlags();
  const config = loadConfig();
  const flags = { ...parsed, demo: parsed.demo ?? config.DATABASE_URL === undefined };
  // Bad demo input fails here, before anything starts: one line, non-zero exit.
  const historyMs = flags.history === undefined || flags.history === "off" ? undefined : parseSpan(flags.history, "--history");
  if (flags.broker !== undefined && !["pg-boss", "bullmq", "rabbitmq", "nats"].includes(flags.broker)) {
    throw new Error(`--broker must be pg-boss, bullmq, rabbitmq or nats (got ${JSON.stringify(flags.broker)})`);
  }
  if (flags.store !== undefined && !(DEMO_STORES as readonly string[]).includes(flags.store)) {
    throw new Error(`--store must be postgres or mariadb (got ${JSON.stringify(flags.store)})`);
  }
  const demoSettings = flags.demo
    ? demoSettingsFromEnv(process.env, {
        ...(flags.broker === undefined ? {} : { broker: flags.broker as DemoSettings["broker"] }),
        ...(flags.store === undefined ? {} : { store: flags.store as DemoSettings["store"] }),
      })
    : undefined;
  // The demo on MariaDB: its effects and shop tables in MARIADB_URL's database (default onceboard_demo).
  const shopUrl = demoSettings?.store === "mariadb" ? demoMariadbUrl(config.MARIADB_URL) : undefined;
  if (shopUrl && historyMs !== undefined) {
    throw new Error(
      "--history backfills the demo's history in PostgreSQL; the demo on MariaDB (--store mariadb) has none: leave --history out or say --history off",
    );
  }
  // A bad role mapping file stops startup with one line, not each single sign-on later.
  loadRoleMapping();
  // A bad providers file stops it too, a line per mistake, rather than failing each reconciliation.
  reconcileProviders(config);
  try {
    loadWorkerMetricsUrls();
  } catch (error) {
    // Not fatal: the console's Workers panel shows the same error until it is fixed.
    const message = error instanceof Error ? error.message : String(error);
    log(
      `warning: ${message}${demoSettings ? " (not used: the console scrapes the demo's workers)" : " (the Workers panel shows this until it is fixed)"}`,
    );
  }
  const registry = new RunRegistry(config.ONCEBOARD_DATA_DIR);
  const reclaimed = await registry.reclaimLeftovers();
  if (reclaimed > 0) log(`stopped ${reclaimed} process(es) left running by a killed start`);
  await assertPortFree(config.PORT);
  registry.save();
  // The registry's write made the directory (or says why it cannot be made); only its owner may enter it.
  ensurePrivateDataDir(config.ONCEBOARD_DATA_DIR);

  const children: ChildProcess[] = [];
  let demo: DemoProcesses | undefined;
  let db: ProvisionedConsoleDatabase | undefined;
  let provisioning: Promise<ProvisionedConsoleDatabase> | undefined;
  let shuttingDown = false;
  const stopChild = (child: ChildProcess, graceMs: number) =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill("SIGTERM");
    });
  const shutdown = async (code: number, reason?: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    log(reason ? `shutting down (${reason})` : "shutting down");
    // Whatever hangs, the process is gone in time; the next start stops what is left (run registry).
    setTimeout(() => {
      log("stopping took too long; exiting (the next start stops what is left)");
      process.exit(code);
    }, STOP_WITHIN_MS).unref();
    // Workers and console first (their connections go), then the database.
    await Promise.all([demo?.stop(4000).catch(() => {}), ...children.map((child) => stopChild(child, 4000))]);
    const database = db ?? (await provisioning?.catch(() => undefined));
    await database?.stop().catch(() => {});
    registry.clear();
    process.exit(code);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => void shutdown(0, signal));
  // npm killed outright (or a terminal closed without a signal for us): we were re-parented.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void shutdown(0, "the process that started npm start is gone");
  }, 500).unref();

  provisioning = provisionDatabase({ log });
  try {
    db = await provisioning;
  } catch (error) {
    registry.clear();
    throw error;
  }
  if (shuttingDown) return; // a signal came while the database started: shutdown() stops it
  const database = db;
  // The demo names its tables and the library's unqualified: its connections put the demo's schema
  // and the library's first on the search_path. Its workers log in as the console does (lib/db/roles.ts).
  const demoUrl = withSearchPath(database.consoleUrl, [config.ONCEBOARD_SCHEMA, DEMO_SCHEMA]);
  const installDemo = async () => {
    // The owner makes the demo's tables; the console role, which the workers log in as, is given them.
    await withClient(withSearchPath(database.url, [config.ONCEBOARD_SCHEMA, DEMO_SCHEMA]), async (owner) => {
      await installDemoSchema(owner);
      await installDemoProviderSchema(owner);
      if (database.consoleRole)
        await giveSchemasToConsoleRole(owner, database.consoleRole, [DEMO_SCHEMA, DEMO_BOSS_SCHEMA, PROVIDER_SCHEMA]);
    });
  };

  try {
    // Decide on history before the live demo writes its first rows (an empty database gets 14
    // days by default), but write it only once the console is up: the console is served as soon
    // as it is built, the live demo gives it data within a minute, and history fills in behind.
    let historySpanMs: number | undefined = historyMs;
    if (historySpanMs === undefined && flags.demo && flags.history === undefined && !shopUrl) {
      historySpanMs = (await withClient(demoUrl, isDatabaseEmpty)) ? 14 * 86_400_000 : undefined;
    }
    if ((demoSettings || historySpanMs !== undefined) && !shuttingDown) await installDemo();
    if (demoSettings && !shuttingDown) {
      const logDir = path.join(config.ONCEBOARD_DATA_DIR, "logs");
      demo = await startDemoProcesses({
        url: demoUrl,
        settings: demoSettings,
        shopUrl,
        brokerUrls: { rabbitmq: config.RABBITMQ_URL, nats: config.NATS_URL, redis: config.REDIS_URL },
        logDir,
        onSpawn: (pid, marker) => registry.add(pid, marker),
        freePort: findFreePort,
        log,
      });
      if (shuttingDown) await demo.stop(4000);
      if (shopUrl) {
        log(
          `demo: effects and shop tables on MariaDB (${redactUrl(shopUrl)}); the broker's, the provider's and the console's tables stay in PostgreSQL; no history backfill and no reconciliation (both read the effects in PostgreSQL)`,
        );
      }
      log(
        `demo: ${demoSettings.workers} workers and a producer at ${demoSettings.rate} orders/s on ${demoSettings.broker}, the provider at http://127.0.0.1:${demo.provider.stripePort} (Stripe-compatible) and ${demo.provider.mailerUrl} (logs in ${logDir}; npm run demo:verify checks it)`,
      );
    }
    const env: Record<string, string> = { DATABASE_URL: database.consoleUrl, PORT: String(config.PORT), HOST: config.HOST };
    if (demo) {
      env.WORKER_METRICS_URLS = demo.metricsUrls.join(",");
      if (shopUrl) {
        // The console reads the demo's effects where its workers write them (the console's own
        // tables stay in its PostgreSQL).
        env.EFFECTS_DATABASE_URL = shopUrl;
      } else {
        // The console reconciles with the demo's provider through the stripe client and the HTTP+JSON
        // adapter, as it would with Stripe and a mailer.
        Object.assign(env, demoReconcileEnv(demo.provider, path.resolve(config.ONCEBOARD_DATA_DIR)));
      }
    }
    const mode = flags.dev ? "dev" : "start";
    const consoleLogFile = path.join(config.ONCEBOARD_DATA_DIR, "logs", "console.log");
    if (mode === "start" && !shuttingDown && (flags.rebuild || !hasProductionBuild())) {
      log("building the console (first start only)");
      await buildConsole(env, (child) => {
        children.push(child);
        registry.add(child.pid, "next");
      });
    }
    if (shuttingDown) return;
    const server = await serveConsole({
      mode,
      port: config.PORT,
      host: config.HOST,
      env,
      onSpawn: (pid) => registry.add(pid, "next"),
      onChild: (child) => children.push(child),
      jsonLogFile: consoleLogFile,
    });
    server.on("exit", (code) => {
      if (!shuttingDown) {
        log(`the console server exited (code ${code})`);
        void shutdown(code ?? 1);
      }
    });
    const exposed = !isLoopbackHost(config.HOST);
    const shown = exposed
      ? probeHost(config.HOST === "0.0.0.0" || config.HOST === "::" ? os.hostname() : config.HOST)
      : "localhost";
    log(`console ready at http://${shown}:${config.PORT}${database.embedded ? " (embedded PostgreSQL)" : ""}`);
    if (exposed && !CONSOLE_AUTHENTICATION_ENABLED) {
      log(
        `warning: HOST=${config.HOST} lets other machines reach the console, which has no authentication yet: anyone who can reach port ${config.PORT} can read it`,
      );
    }
    registry.setConsoleUrl(`http://${shown}:${config.PORT}`);
    log(`console logs (JSON lines) in ${consoleLogFile}`);
    // The login link is printed last, and again once the history backfill's lines have scrolled it away.
    const login = await bootstrapLogin(database.url, `http://${shown}:${config.PORT}`);
    log(login.message);
    if (historySpanMs !== undefined) {
      const spanMs = historySpanMs;
      log(
        `backfilling ${Math.round(spanMs / 86_400_000) || "<1"} day(s) of demo history (marked demo; npm run demo:reset removes it)`,
      );
      try {
        const r = await withClient(demoUrl, (client) =>
          backfillHistory(client, { spanMs, settings: demoSettings ?? demoSettingsFromEnv(), onProgress: log }),
        );
        log(historyReadyLine(r));
      } catch (error) {
        // Each day is its own transaction: what was written is whole. The live console goes on.
        if (!shuttingDown) log(`history backfill stopped: ${error instanceof Error ? error.message : String(error)}`);
      }
      // The same link only while nobody has used it: a used one is no way in any more.
      if (!shuttingDown) log(await bootstrapLoginReminder(database.url, login).catch(() => login.message));
    }
  } catch (error) {
    if (shuttingDown) return; // the failure is the stop we asked for
    shuttingDown = true;
    await demo?.stop(4000).catch(() => {});
    await Promise.all(children.map((child) => stopChild(child, 4000)));
    await database.stop().catch(() => {});
    registry.clear();
    throw error;
  }
});
