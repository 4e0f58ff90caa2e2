import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { createToken, revokeToken } from "../../lib/auth/tokens";
import { loadConfig } from "../../lib/config";
import { HOSTILE_ERROR, HOSTILE_OUTCOME } from "../../lib/console/testing/hostile-values";
import { findFreePort } from "../../lib/db/free-port";
import { withSearchPath } from "../../lib/db/pool";
import { createPrismaClient } from "../../lib/db/prisma";
import { createScratchDatabase, withDatabase } from "../../lib/db/scratch";
import { seedDeliveries } from "../../lib/features/keys-and-effects/testing/seed-deliveries";
import { seedReconciliation } from "../../lib/features/reconciliation/testing/seed-reconciliation";
import { DEFAULT_SCHEMA } from "../../lib/idempotency";
import { hasProductionBuild } from "../../scripts/next-server";
import setupDatabase from "../global-setup";
import { startPayco } from "../second-system/payco";
import { writeKnownWorkload } from "../second-system/workload";
import {
  type Credential,
  consolePages,
  type FreshStartProbe,
  fetchAs,
  freshStartTargets,
  HOSTILE_KEY,
  SECOND_SYSTEM_TENANTS,
  SERVER_TENANTS,
  type ServerTier,
  signIn,
  tenantRows,
  unhandledIn,
} from "./tier";

/**
 * The real-server tier's one console, shared by every file of the "server" project:
 *
 * 1. A fresh, empty database on the test run's PostgreSQL, handed to `npm start` (scripts/start.ts,
 *    --no-demo) as a plain postgresql://…/dbname URL — no search path, as production has it — with
 *    an empty ONCEBOARD_DATA_DIR. start.ts migrates it and serves the production build (`next
 *    start`), exactly as it does for a user.
 * 2. On that fresh start, before anything is seeded: every parameterless GET route of the OpenAPI
 *    document and every page, as a platform admin. The answers are handed to fresh-start.test.ts.
 * 3. Three tenants (acme, globex, initech), each with its own keys, stuck claim, owner and
 *    violation; a token per role per tenant, platform tokens per role, a revoked token.
 *
 * Without a production build the tier is skipped with a banner (a failure under CI=true).
 */
export default async function setup(project: TestProject) {
  if (!hasProductionBuild()) {
    const reason = "no production build (.next/BUILD_ID): run `npm run build` first";
    const banner = "!".repeat(78);
    if (loadConfig().CI) throw new Error(`server tier: ${reason} (CI=true)`);
    process.stderr.write(`${banner}\n!! REAL-SERVER TESTS SKIPPED: ${reason}.\n${banner}\n`);
    project.provide("serverTier", { skipped: reason } satisfies ServerTier);
    return;
  }
  // The other tiers' PostgreSQL (DATABASE_URL, or the embedded one): shared when they run too.
  const releaseDatabase = await setupDatabase(project);
  const shared = await globalThis.__onceboardTestDatabase;
  if (!shared) throw new Error("server tier: test/global-setup.ts did not start a PostgreSQL");

  const scratch = await createScratchDatabase(shared.adminUrl, { prefix: `onceboard_server_${process.pid}` });
  // createScratchDatabase's URL carries the library's search path; the console gets none.
  const plainUrl = withDatabase(shared.adminUrl, scratch.name);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-server-"));
  const port = await findFreePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const logFile = path.join(dataDir, "start.log");
  const start = startConsole({ plainUrl, dataDir, port, logFile });

  const teardown = async () => {
    await stop(start);
    // A rejection the console logged instead of dying of (or died of): the run fails, naming it.
    const rejections = unhandledIn(logFile);
    fs.rmSync(dataDir, { recursive: true, force: true });
    await scratch.drop().catch(() => {});
    await releaseDatabase();
    if (rejections.length > 0) throw new Error(`server tier: the console had unhandled rejections:\n${rejections.join("\n")}`);
  };
  try {
    await waitUntilServing(baseUrl, start, logFile);
    const seedUrl = withSearchPath(plainUrl, [DEFAULT_SCHEMA]);
    // Ended here, not by $disconnect (the adapter does not own it): an idle client still open when
    // the teardown drops the database would die with 57P01, an unhandled 'error' in this process.
    const seedPool = new pg.Pool({ connectionString: seedUrl, max: 2 });
    const prisma = createPrismaClient(seedPool);
    try {
      const fresh = async (tenantId: string | null) =>
        (await createToken({ name: `server tier fresh start ${tenantId ?? "platform"}`, tenantId, role: "admin" }, prisma))
          .secret;
      const freshStart = await probeFreshStart(baseUrl, { platform: await fresh(null), tenant: await fresh(SERVER_TENANTS[0]) });
      await seedTenants(seedUrl);
      const credentials = await createCredentials(prisma, baseUrl);
      project.provide("serverTier", { baseUrl, credentials, freshStart, logFile } satisfies ServerTier);
    } finally {
      await prisma.$disconnect();
      await seedPool.end();
    }
  } catch (error) {
    process.stderr.write(`server tier: the console's log (${logFile}):\n${tail(logFile)}\n`);
    await teardown();
    throw error;
  }
  return teardown;
}

function startConsole(options: { plainUrl: string; dataDir: string; port: number; logFile: string }): ChildProcess {
  const env: Record<string, string | undefined> = {};
  // vitest's own variables (NODE_ENV=test, VITEST_*) are not what `npm start` sees.
  for (const [name, value] of Object.entries(process.env)) if (!/^(VITEST|NODE_ENV$|TEST$)/.test(name)) env[name] = value;
  Object.assign(env, {
    DATABASE_URL: options.plainUrl,
    PORT: String(options.port),
    HOST: "127.0.0.1",
    ONCEBOARD_DATA_DIR: options.dataDir,
    ONCEBOARD_SECRET: randomBytes(32).toString("base64url"),
    // The fuzz and the matrix send a few thousand requests from one address within a minute.
    ONCEBOARD_RATE_LIMIT_PER_MINUTE: "1000000",
    ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "1000000",
    ONCEBOARD_SIGN_IN_RATE_LIMIT_PER_MINUTE: "1000000",
    NEXT_TELEMETRY_DISABLED: "1",
    // An unhandled rejection anywhere (start.ts, the console) ends the process: the tier fails on
    // one instead of a line in a log nobody reads (scripts/console-server.ts makes it fatal under Next).
    NODE_OPTIONS: [process.env.NODE_OPTIONS, UNHANDLED_REJECTIONS_FATAL].filter(Boolean).join(" "),
  });
  const out = fs.openSync(options.logFile, "a");
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts", "--no-demo", "--history", "off"], {
    cwd: path.resolve(import.meta.dirname, "../.."),
    env: env as NodeJS.ProcessEnv,
    stdio: ["ignore", out, out],
  });
  fs.closeSync(out);
  return child;
}

async function waitUntilServing(baseUrl: string, child: ChildProcess, logFile: string): Promise<void> {
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`npm start exited (code ${child.exitCode}):\n${tail(logFile)}`);
    // start.ts prints this once `next start` answers and the database is migrated.
    if (fs.readFileSync(logFile, "utf8").includes("console ready at")) {
      const health = await fetch(`${baseUrl}/api/v1/health`).catch(() => null);
      if (health?.ok) return;
    }
    await sleep(250);
  }
  throw new Error(`npm start did not serve ${baseUrl} within 180 s`);
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve();
    }, 12_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** The flag the tier's `npm start` runs with (NODE_OPTIONS: start.ts and the console alike). */
const UNHANDLED_REJECTIONS_FATAL = "--unhandled-rejections=strict";

function tail(file: string): string {
  try {
    return fs.readFileSync(file, "utf8").split("\n").slice(-40).join("\n");
  } catch {
    return "(no log)";
  }
}

/**
 * What the fresh console answers on every parameterless GET route and every page, to a platform
 * admin and to a tenant's admin (some routes want a tenant named, which only the second has).
 */
async function probeFreshStart(baseUrl: string, secrets: { platform: string; tenant: string }): Promise<FreshStartProbe[]> {
  const targets = await freshStartTargets(baseUrl, secrets.platform);
  const probes: FreshStartProbe[] = [];
  for (const [as, secret] of Object.entries(secrets) as ["platform" | "tenant", string][]) {
    for (const target of targets) {
      const response = await fetchAs(baseUrl, target, { kind: "bearer", secret, label: `${as} admin` });
      probes.push({ path: target, as, status: response.status, body: (await response.text()).slice(0, 200_000) });
    }
    // A page answers a Bearer token with the way to sign in; what it shows a person needs a session.
    const cookie = await signIn(baseUrl, secret);
    for (const page of consolePages()) {
      const response = await fetchAs(baseUrl, page, { kind: "cookie", cookie, label: `${as} admin (session)` });
      probes.push({
        path: page,
        as: `${as} (session)`,
        status: response.status,
        body: (await response.text()).slice(0, 400_000),
      });
    }
  }
  return probes;
}

/**
 * Each tenant's rows: a completed effect with its deliveries, a stuck claim, a failed effect and an uncaught violation, all recent; and
 * its reconciliation findings (keys naming the tenant), beside one that names no tenant.
 */
async function seedTenants(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const now = Date.now();
    const hour = new Date(Math.floor(now / 3_600_000) * 3_600_000);
    for (const tenant of SERVER_TENANTS) {
      const rows = tenantRows(tenant);
      await client.query(
        `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until, first_message_id,
                              last_message_id, outcome, created_at, updated_at, completed_at, duplicate_count)
         VALUES ($1, $2, 'capture-payment', 'completed', 'external', 1, NULL, NULL, $3, $3, $4, $5, $5, $5, 2),
                ($1, $6, 'capture-payment', 'in_progress', 'external', 1, $7, $8, $9, $9, NULL, $5, $5, NULL, 0),
                ($1, $10, 'capture-payment', 'failed', 'external', 2, NULL, NULL, $10, $10, NULL, $5, $5, NULL, 0)`,
        [
          tenant,
          rows.completedKey,
          rows.messageId,
          JSON.stringify({ chargeId: rows.chargeId }),
          new Date(now - 30 * 60_000),
          rows.stuckKey,
          rows.owner,
          new Date(now - 20 * 60_000),
          `${rows.messageId}-stuck`,
          rows.failedKey,
        ],
      );
      // The completed key's deliveries: its first claim and the two duplicates it counts, each
      // naming the tenant's own message and worker, for the key page's timeline.
      const created = new Date(now - 30 * 60_000);
      await seedDeliveries(
        client,
        (["claimed", "duplicate", "duplicate"] as const).map((answer, n) => ({
          tenant,
          key: rows.completedKey,
          at: new Date(created.getTime() + n * 60_000),
          answer,
          jobType: "capture-payment",
          messageId: rows.messageId,
          deliveryAttempt: n + 1,
          effectAttempt: 1,
          worker: rows.owner,
          claimMs: 1.5,
          effectCreatedAt: created,
        })),
      );
      await client.query(
        `INSERT INTO tenant_suppressions_hour (hour, tenant_id, job_type, count) VALUES ($1, $2, 'capture-payment', 2)`,
        [hour, tenant],
      );
      await client.query(
        `INSERT INTO tenant_violations_hour (hour, tenant_id, job_type, constraint_name, count, last_key, last_seen)
         VALUES ($1, $2, 'capture-payment', 'orders_pkey', 1, $3, $4)`,
        [hour, tenant, rows.violationKey, new Date(now - 10 * 60_000)],
      );
    }
    // Secrets stored where only their values give them away (issue 35): the Keys page's HTML and
    // RSC payload must show none of them (stored-values.test.ts).
    await client.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, first_message_id, last_message_id, outcome, error,
                            created_at, updated_at, completed_at)
       VALUES ($1, $2, 'capture-payment', 'failed', 'external', 1, 'm-hostile', 'm-hostile', $3, $4, $5, $5, $5)`,
      [SERVER_TENANTS[0], HOSTILE_KEY, JSON.stringify(HOSTILE_OUTCOME), HOSTILE_ERROR, new Date(now - 25 * 60_000)],
    );
    await seedReconciliation(client, new Date(now));
  } finally {
    await client.end();
  }
  // The second system's known workload, through the library, with its own provider running just
  // for the writing (the console here reconciles nothing: no providers file).
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  pool.on("error", () => {});
  const payco = await startPayco();
  try {
    await writeKnownWorkload(pool, payco);
  } finally {
    await payco.close();
    await pool.end();
  }
}

/**
 * A token per role per tenant and per platform role, each as a Bearer token and as a session
 * cookie from the sign-in form; and a revoked one both ways (the cookie made before the revocation).
 */
async function createCredentials(prisma: ReturnType<typeof createPrismaClient>, baseUrl: string): Promise<Credential[]> {
  const credentials: Credential[] = [];
  for (const tenant of [...SERVER_TENANTS, null]) {
    for (const role of ["viewer", "operator", "admin"] as const) {
      const label = `${tenant ?? "platform"} ${role}`;
      const { secret } = await createToken({ name: `server tier ${label}`, tenantId: tenant, role }, prisma);
      credentials.push({ kind: "bearer", secret, label, tenant, role });
      credentials.push({ kind: "cookie", cookie: await signIn(baseUrl, secret), label: `${label} (session)`, tenant, role });
    }
  }
  // The second system's tenants: a viewer each, as a token and as a session.
  for (const tenant of SECOND_SYSTEM_TENANTS) {
    const label = `${tenant} viewer`;
    const { secret } = await createToken({ name: `server tier ${label}`, tenantId: tenant, role: "viewer" }, prisma);
    credentials.push({ kind: "bearer", secret, label, tenant, role: "viewer" });
    credentials.push({
      kind: "cookie",
      cookie: await signIn(baseUrl, secret),
      label: `${label} (session)`,
      tenant,
      role: "viewer",
    });
  }
  const revoked = await createToken({ name: "server tier revoked", tenantId: SERVER_TENANTS[0], role: "admin" }, prisma);
  const cookie = await signIn(baseUrl, revoked.secret);
  await revokeToken(revoked.token.id, prisma);
  credentials.push({ kind: "bearer", secret: revoked.secret, label: "revoked acme admin", revoked: true });
  credentials.push({ kind: "cookie", cookie, label: "revoked acme admin (session)", revoked: true });
  return credentials;
}

declare module "vitest" {
  export interface ProvidedContext {
    serverTier: ServerTier;
  }
}
