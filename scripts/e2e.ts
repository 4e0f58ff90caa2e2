import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
import fs from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { E2E_LOGIN_CODE_COUNT, E2E_TENANT, type E2eRole } from "../e2e/roles";
import { seedWorkerStarts, WORKER_EXPOSITION } from "../e2e/worker-metrics";
import { createLoginLink } from "../lib/auth/login";
import { createToken } from "../lib/auth/tokens";
import { type Config, loadConfig, loadDebugFlag } from "../lib/config";
import { startEmbeddedPostgres } from "../lib/db/embedded";
import { describeDatabaseError, redactUrl } from "../lib/db/errors";
import { findClosedPort, findFreePort } from "../lib/db/free-port";
import { migrateConsole } from "../lib/db/migrate";
import { ensureEffectPartitions } from "../lib/db/partitions";
import { withSearchPath } from "../lib/db/pool";
import { createPrismaClient } from "../lib/db/prisma";
import { createScratchDatabase } from "../lib/db/scratch";
import { backfillHistory } from "../lib/demo/history";
import { demoProvidersFile } from "../lib/demo/providers-file";
import { KEYS_SEED_DAYS_BACK, seedKeys } from "../lib/features/keys-and-effects/testing/seed-keys";
import { seedStates } from "../lib/features/keys-and-effects/testing/seed-states";
import { SEED_DAYS_BACK, seedOverview } from "../lib/features/overview/testing/seed-overview";
import {
  seedReconciledEffects,
  seedReconciliation,
  seedReconciliationLoad,
} from "../lib/features/reconciliation/testing/seed-reconciliation";
import { GAPS_SEED_DAYS_BACK, seedGaps } from "../lib/features/retention-and-gaps/testing/seed-gaps";
import { DEFAULT_SCHEMA } from "../lib/idempotency";
import { FILL_DAYS_BACK, seedFill } from "../test/console-fill";
import { startTestProvider, TEST_CLIENT_ID, TEST_CLIENT_SECRET } from "../test/oidc/test-provider";
import { buildConsole, hasProductionBuild, nextEnv, serveConsole } from "./next-server";

/**
 * `npm run test:e2e`: the Playwright browser tests against a real console on a real, seeded database.
 *
 * 1. Chromium from CHROMIUM_PATH or /usr/bin/chromium (never downloaded). Missing: skipped with a
 *    loud notice, or a failure under CI=true.
 * 2. A fresh database: onceboard_e2e_<pid> on DATABASE_URL's server when set, otherwise on an
 *    embedded server in a temp directory. Migrated, partitioned, seeded with known rows. Beside it
 *    onceboard_e2e_<pid>_filled: the same rows, then demo history and test/console-fill.ts's rows
 *    (long names, big numbers, pages of every list) for the layout checks.
 * 3. `next build` when there is no build or a source file is newer than it; then three `next start`
 *    servers on free ports: one on the seeded database, one whose DATABASE_URL points at a closed
 *    port (for the error state), one on the filled database. The seeded and filled ones'
 *    WORKER_METRICS_URLS name a fake worker serving e2e/worker-metrics.ts on /metrics and a closed
 *    port (a down worker); the other's is empty.
 * 4. Playwright, with the two base URLs in ONCEBOARD_E2E_BASE_URL / ONCEBOARD_E2E_BROKEN_URL, the
 *    filled console's in ONCEBOARD_E2E_FILLED_URL and its tokens in ONCEBOARD_E2E_FILLED_TOKENS, the
 *    two worker URLs in ONCEBOARD_E2E_WORKER_UP_URL / ONCEBOARD_E2E_WORKER_DOWN_URL, and its JSON
 *    report written to ONCEBOARD_E2E_RESULTS when set. Tokens for viewer, operator and admin of
 *    tenant E2E_TENANT and a platform admin are in ONCEBOARD_E2E_TOKENS (JSON, role → secret);
 *    e2e/auth.ts signs in with them; one-time login codes for the viewer's token are in
 *    ONCEBOARD_E2E_LOGIN_CODES (JSON array). The seeded console also signs in through a real OpenID
 *    Provider (test/oidc/test-provider.ts, in this process, its login form included): OIDC_* and
 *    PUBLIC_URL are set for it (e2e/oidc.spec.ts). Both servers share one ONCEBOARD_SECRET (cookies are not
 *    scoped by port, so a session made on the healthy one is honoured by the broken one).
 * 5. Everything torn down, the database dropped, whatever happened.
 */

const ROOT = path.resolve(import.meta.dirname, "..");
const PLAYWRIGHT_BIN = path.join(ROOT, "node_modules", ".bin", "playwright");
const log = (line: string) => process.stdout.write(`e2e: ${line}\n`);

let loaded: Config | undefined;
/** The environment through lib/config, read when first needed (a bad value is then main's one-line error). */
const config = (): Config => (loaded ??= loadConfig());

function findChromium(): string | undefined {
  const candidate = config().CHROMIUM_PATH;
  return existsSync(candidate) ? candidate : undefined;
}

const isCI = () => config().CI;

/** An empty Playwright-shaped report, so a CI summer reading ONCEBOARD_E2E_RESULTS still finds a file. */
async function writeSkippedReport(reason: string): Promise<void> {
  const file = config().ONCEBOARD_E2E_RESULTS;
  if (!file) return;
  await fs.mkdir(path.dirname(path.resolve(file)), { recursive: true });
  await fs.writeFile(
    file,
    JSON.stringify({
      config: {},
      suites: [],
      errors: [],
      skippedReason: reason,
      stats: { expected: 0, unexpected: 0, flaky: 0, skipped: 0 },
    }),
  );
}

/** The build is stale when any source it is made from changed after it. */
function buildIsStale(): string | undefined {
  if (!hasProductionBuild()) return "no production build yet";
  const builtAt = statSync(path.join(ROOT, ".next", "BUILD_ID")).mtimeMs;
  const newer = (entry: string): string | undefined => {
    const full = path.join(ROOT, entry);
    if (!existsSync(full)) return undefined;
    const stat = statSync(full);
    if (!stat.isDirectory()) return stat.mtimeMs > builtAt ? entry : undefined;
    for (const child of readdirSync(full)) {
      // The generated Prisma client is rewritten by every `prisma generate`; its schema is checked instead.
      if (child === "node_modules" || child === "generated" || /\.test\.tsx?$/.test(child)) continue;
      const found = newer(path.join(entry, child));
      if (found) return found;
    }
    return undefined;
  };
  for (const entry of ["app", "components", "lib", "public", "prisma/schema.prisma", "next.config.js", "package.json"]) {
    const changed = newer(entry);
    if (changed) return `${changed} changed since the last build`;
  }
  return undefined;
}

function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve();
    }, 10_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** A stand-in worker process: serves the fixed exposition on /metrics (404 elsewhere); returns its URL. */
async function serveWorkerMetrics(cleanups: (() => Promise<void>)[]): Promise<string> {
  const server = http.createServer((request, response) => {
    if (request.url !== "/metrics") {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" }).end(WORKER_EXPOSITION);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
}

/**
 * One token per role the browser tests sign in as (tenant E2E_TENANT, and a platform admin), and
 * one-time login codes for the viewer's token (each works once: one per test that signs in by link).
 */
async function createE2eTokens(url: string): Promise<{ tokens: Record<E2eRole, string>; viewerLoginCodes: string[] }> {
  // A client of its own on the e2e database: the process-wide one follows DATABASE_URL.
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const prisma = createPrismaClient(pool);
  const make = async (role: "viewer" | "operator" | "admin", tenantId: string | null) =>
    createToken({ name: `e2e ${role} ${tenantId ?? "platform"}`, tenantId, role }, prisma);
  try {
    const viewer = await make("viewer", E2E_TENANT);
    const viewerLoginCodes: string[] = [];
    for (let i = 0; i < E2E_LOGIN_CODE_COUNT; i++)
      viewerLoginCodes.push((await createLoginLink(viewer.token.id, { db: prisma })).code);
    return {
      tokens: {
        viewer: viewer.secret,
        operator: (await make("operator", E2E_TENANT)).secret,
        admin: (await make("admin", E2E_TENANT)).secret,
        "platform-admin": (await make("admin", null)).secret,
      },
      viewerLoginCodes,
    };
  } finally {
    await prisma.$disconnect();
    await pool.end();
  }
}

/**
 * Migrates a fresh database and seeds it with the known rows every spec reads; with `fill`, then
 * weeks of demo history and test/console-fill.ts's rows on top (the layout checks' database).
 */
async function migrateAndSeed(url: string, { fill }: { fill: boolean }): Promise<void> {
  await migrateConsole(url);
  // The seeds name tables unqualified; the console itself is given the plain URL, as a user gives it.
  const seeder = new pg.Client({ connectionString: withSearchPath(url, [DEFAULT_SCHEMA]) });
  await seeder.connect();
  try {
    await ensureEffectPartitions(seeder, {
      back: Math.max(SEED_DAYS_BACK, KEYS_SEED_DAYS_BACK, GAPS_SEED_DAYS_BACK, FILL_DAYS_BACK) + 1,
      ahead: 7,
    });
    await seedOverview(seeder);
    await seedKeys(seeder);
    await seedStates(seeder);
    await seedGaps(seeder);
    const seededAt = new Date();
    await seedReconciliation(seeder, seededAt);
    await seedReconciliationLoad(seeder, seededAt);
    await seedReconciledEffects(seeder);
    await seedWorkerStarts(seeder);
    if (fill) {
      await backfillHistory(seeder, { spanMs: FILLED_HISTORY_DAYS * 86_400_000, ordersPerDay: 300 });
      await seedFill(seeder);
    }
  } finally {
    await seeder.end();
  }
}

/** The filled database's demo history: past the Overview's 7-day range, so every range has a shape. */
const FILLED_HISTORY_DAYS = 8;

/** The demo's Stripe entry alone, as a providers file for the seeded console. */
function writeStripeOnlyProvidersFile(): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "onceboard-e2e-providers-")), "providers.json");
  const { providers } = demoProvidersFile({ mailerUrl: "http://127.0.0.1:9/mailer/messages" });
  writeFileSync(file, JSON.stringify({ providers: providers.filter((p) => p.name === "stripe") }));
  return file;
}

async function main(): Promise<number> {
  const chromium = findChromium();
  if (!chromium) {
    const where = `CHROMIUM_PATH=${config().CHROMIUM_PATH}`;
    const banner = "!".repeat(78);
    if (isCI()) {
      process.stderr.write(
        `${banner}\ne2e: FAILED: no Chromium at ${where} and CI=true. Install Debian's chromium package.\n${banner}\n`,
      );
      return 1;
    }
    process.stderr.write(
      `${banner}\n!! BROWSER TESTS SKIPPED: no Chromium at ${where}.\n!! Install it (apt-get install chromium) or set CHROMIUM_PATH; browsers are never downloaded.\n${banner}\n`,
    );
    await writeSkippedReport(`no Chromium at ${where}`);
    return 0;
  }

  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async () => {
    while (cleanups.length > 0)
      await cleanups
        .pop()?.()
        .catch((error) => log(`cleanup: ${error}`));
  };
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: tearing down`);
    void cleanup().then(() => process.exit(130));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  try {
    // 1. A PostgreSQL server: the one DATABASE_URL names, or an embedded one of our own.
    let adminUrl = config().DATABASE_URL;
    if (!adminUrl) {
      const dataDir = path.join(os.tmpdir(), `onceboard-e2e-pg-${process.pid}`);
      log(`starting embedded PostgreSQL in ${dataDir}`);
      const server = await startEmbeddedPostgres({ dataDir, persistent: false });
      cleanups.push(async () => {
        await server.stop();
      });
      adminUrl = server.url;
    }

    // 2. A fresh database, dropped at the end.
    const database = `onceboard_e2e_${process.pid}`;
    const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
    try {
      await admin.connect();
    } catch (error) {
      throw new Error(describeDatabaseError(error, adminUrl));
    }
    await admin.end();
    const { url, drop } = await createScratchDatabase(adminUrl, { name: database });
    cleanups.push(drop);
    log(`database ${redactUrl(url)}`);

    // The layout checks' database: the same seeds, then every table filled past them
    // (test/console-fill.ts), read through a console of its own so no other spec's counts move.
    const filled = await createScratchDatabase(adminUrl, { name: `${database}_filled` });
    cleanups.push(filled.drop);
    await Promise.all([migrateAndSeed(url, { fill: false }), migrateAndSeed(filled.url, { fill: true })]);
    log("migrated and seeded (and the filled database)");
    const { tokens, viewerLoginCodes } = await createE2eTokens(url);
    const { tokens: filledTokens } = await createE2eTokens(filled.url);

    // 3. The console: built when needed, served twice (healthy and with an unreachable database).
    const stale = config().ONCEBOARD_E2E_REBUILD ? "ONCEBOARD_E2E_REBUILD is set" : buildIsStale();
    if (stale) {
      log(`building the console (${stale})`);
      await buildConsole({});
    }
    // The closed ports stay closed: no server started later (the identity provider, the worker's
    // metrics, a spec's own) can be handed them.
    const [port, brokenPort, filledPort, closedPort, closedWorkerPort] = await Promise.all([
      findFreePort(),
      findFreePort(),
      findFreePort(),
      findClosedPort(),
      findClosedPort(),
    ]);
    const brokenDatabaseUrl = `postgresql://postgres:unused@127.0.0.1:${closedPort}/onceboard_unreachable`;
    const secret = randomBytes(32).toString("base64url");
    const workerUpUrl = await serveWorkerMetrics(cleanups);
    const identityProvider = await startTestProvider({ consoleUrl: `http://127.0.0.1:${port}` });
    cleanups.push(() => identityProvider.close());
    const workerDownUrl = `http://127.0.0.1:${closedWorkerPort}/metrics`;
    const providersFile = writeStripeOnlyProvidersFile();
    const seededEnv = (databaseUrl: string, at: number): Record<string, string> => ({
      DATABASE_URL: databaseUrl,
      PORT: String(at),
      WORKER_METRICS_URLS: `${workerUpUrl},${workerDownUrl}`,
      // The seeded findings and keys are the demo's (Stripe's capture steps): the Keys page's
      // provider verdict reads them through the demo's Stripe entry. No STRIPE_API_KEY: the
      // schedule reads nothing, so the seeded runs stay the only ones.
      ONCEBOARD_PROVIDERS_FILE: providersFile,
      ONCEBOARD_SECRET: secret,
      // The seeded history reaches weeks back, past the 7-day retention: a maintenance run at
      // start would drop it under the other specs. e2e/retention.spec.ts applies by hand, last.
      RETENTION_MAINTENANCE_INTERVAL_SECONDS: "0",
      ONCEBOARD_RATE_LIMIT_PER_MINUTE: "100000",
      ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "100000",
      ONCEBOARD_SIGN_IN_RATE_LIMIT_PER_MINUTE: "100000",
      PUBLIC_URL: `http://127.0.0.1:${at}`,
    });
    const [healthy, broken, filledConsole] = await Promise.all([
      serveConsole({
        mode: "start",
        port,
        env: {
          ...seededEnv(url, port),
          OIDC_ISSUER: identityProvider.issuer,
          OIDC_CLIENT_ID: TEST_CLIENT_ID,
          OIDC_CLIENT_SECRET: TEST_CLIENT_SECRET,
          OIDC_NAME: "Test IdP",
        },
        quiet: true,
      }),
      serveConsole({
        mode: "start",
        port: brokenPort,
        env: {
          DATABASE_URL: brokenDatabaseUrl,
          PORT: String(brokenPort),
          WORKER_METRICS_URLS: "",
          ONCEBOARD_SECRET: secret,
          RETENTION_MAINTENANCE_INTERVAL_SECONDS: "0",
        },
        quiet: true,
      }),
      serveConsole({ mode: "start", port: filledPort, env: seededEnv(filled.url, filledPort), quiet: true }),
    ]);
    cleanups.push(() => stopChild(healthy));
    cleanups.push(() => stopChild(broken));
    cleanups.push(() => stopChild(filledConsole));
    log(
      `console on http://127.0.0.1:${port} (seeded), http://127.0.0.1:${brokenPort} (database unreachable) and http://127.0.0.1:${filledPort} (filled)`,
    );

    // 4. Playwright.
    const code = await new Promise<number>((resolve, reject) => {
      const child = spawn(PLAYWRIGHT_BIN, ["test", ...process.argv.slice(2)], {
        cwd: ROOT,
        stdio: "inherit",
        env: nextEnv({
          CHROMIUM_PATH: chromium,
          ONCEBOARD_E2E_BASE_URL: `http://127.0.0.1:${port}`,
          ONCEBOARD_E2E_BROKEN_URL: `http://127.0.0.1:${brokenPort}`,
          ONCEBOARD_E2E_FILLED_URL: `http://127.0.0.1:${filledPort}`,
          ONCEBOARD_E2E_FILLED_TOKENS: JSON.stringify(filledTokens),
          ONCEBOARD_E2E_WORKER_UP_URL: workerUpUrl,
          ONCEBOARD_E2E_WORKER_DOWN_URL: workerDownUrl,
          ONCEBOARD_E2E_TOKENS: JSON.stringify(tokens),
          ONCEBOARD_E2E_LOGIN_CODES: JSON.stringify(viewerLoginCodes),
          PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1",
        }),
      });
      cleanups.push(() => stopChild(child));
      child.on("error", reject);
      child.on("exit", (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
    });
    return code;
  } finally {
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`e2e: ${error instanceof Error ? error.message : String(error)}\n`);
    if (loadDebugFlag()) console.error(error);
    process.exit(1);
  },
);
