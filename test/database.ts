import pg from "pg";
import { inject } from "vitest";
import { consolePoolConfig, withSearchPath } from "../lib/db/pool";
import { EMBEDDED_CONSOLE_ROLE, urlAsRole } from "../lib/db/roles";
import { createScratchDatabase } from "../lib/db/scratch";
import { DEMO_SCHEMA } from "../lib/db/upgrade-legacy";
import { DEFAULT_SCHEMA } from "../lib/idempotency";

export interface TestDatabase {
  /** The database's plain URL, as a user gives it: no search_path. */
  url: string;
  /** The same database as the console role logs in (lib/db/roles.ts), as production's console does. */
  consoleUrl: string;
  /**
   * The URL with the library's and the demo's schemas on the search_path, as `npm start` hands the
   * demo's processes theirs: for a test's own handlers and extra connections, which name their
   * tables (and the demo's) unqualified. Never for the console or the library under test.
   */
  sqlUrl: string;
  name: string;
  /**
   * A pool on the test database configured as the console's pools are (consolePoolConfig: the
   * library's schema on the search_path, set by the pool, not the URL), for read models and the
   * tests' own SQL; closed by drop().
   */
  pool: pg.Pool;
  drop(): Promise<void>;
}

/**
 * A fresh database cloned from the migrated template: isolated per test file and fast
 * (CREATE DATABASE … TEMPLATE copies files, it does not re-run migrations).
 */
export async function createTestDatabase(options: { poolSize?: number } = {}): Promise<TestDatabase> {
  const template = inject("templateDatabase");
  const templatePid = template.replace(/^onceboard_template_/, "");
  const scratch = await createScratchDatabase(inject("adminDatabaseUrl"), { prefix: `onceboard_t${templatePid}`, template });
  const pool = new pg.Pool(
    consolePoolConfig({
      connectionString: scratch.url,
      schema: DEFAULT_SCHEMA,
      statementTimeoutMs: null,
      max: options.poolSize ?? 10,
      application_name: "onceboard-test",
    }),
  );
  pool.on("error", () => {});
  return {
    url: scratch.url,
    consoleUrl: urlAsRole(scratch.url, EMBEDDED_CONSOLE_ROLE, inject("consoleRolePassword")),
    sqlUrl: withSearchPath(scratch.url, [DEFAULT_SCHEMA, DEMO_SCHEMA]),
    name: scratch.name,
    pool,
    async drop() {
      await pool.end().catch(() => {});
      if (consoleIsOn(scratch.name)) await endConsoleHandles();
      await scratch.drop();
    },
  };
}

/** Whether the console's code in this process is pointed at `databaseName` (DATABASE_URL). */
function consoleIsOn(databaseName: string): boolean {
  const url = process.env.DATABASE_URL;
  return url !== undefined && URL.canParse(url) && new URL(url).pathname === `/${databaseName}`;
}

/**
 * Ends the console's process-wide connections (its pool, its Prisma client, the maintenance pool,
 * the auth cache's LISTEN connection) and forgets what holds them (the rate limits, the audit
 * chain's walk): the next use makes them again from DATABASE_URL. A test database the console used
 * is dropped after this, so its drop does not wait for connections nobody will close.
 */
export async function endConsoleHandles(): Promise<void> {
  globalThis.__onceboardAuthCache?.cache.stop();
  globalThis.__onceboardAuthCache = undefined;
  if (globalThis.__onceboardPrisma) await globalThis.__onceboardPrisma.$disconnect().catch(() => {});
  if (globalThis.__onceboardPool) await globalThis.__onceboardPool.end().catch(() => {});
  if (globalThis.__onceboardMaintenancePool) await globalThis.__onceboardMaintenancePool.end().catch(() => {});
  globalThis.__onceboardPrisma = undefined;
  globalThis.__onceboardPool = undefined;
  globalThis.__onceboardMaintenancePool = undefined;
  globalThis.__onceboardRateLimits = undefined;
  globalThis.__onceboardAuditIntegrity = undefined;
}

/**
 * A pool on `db` as the console connects: its own role (INSERT and SELECT on audit_log only), the
 * library's schema set by the pool. The caller ends it.
 */
export function consoleRolePool(db: TestDatabase, applicationName: string): pg.Pool {
  return new pg.Pool(
    consolePoolConfig({
      connectionString: db.consoleUrl,
      schema: DEFAULT_SCHEMA,
      max: 2,
      statementTimeoutMs: null,
      application_name: applicationName,
    }),
  );
}

/** A pool of one connection on `url`, configured as the console's are: every checkout takes that same connection. */
export function oneConnectionPool(url: string, applicationName: string): pg.Pool {
  return new pg.Pool(
    consolePoolConfig({
      connectionString: url,
      schema: DEFAULT_SCHEMA,
      max: 1,
      statementTimeoutMs: null,
      application_name: applicationName,
    }),
  );
}

/** How many 'error' listeners a one-connection pool's connection carries while checked in: a code path that leaves one grows it. */
export async function idleErrorListeners(pool: pg.Pool): Promise<number> {
  const client = await pool.connect();
  const listeners = client.listenerCount("error");
  client.release();
  return listeners;
}

/**
 * A test database the console's code in this process uses (DATABASE_URL), with a session secret
 * and rate limits no test reaches: the setup of a test that calls the console's routes and guard
 * in process. `secretLetter` repeated 40 times is the secret, so each file signs its own cookies.
 */
export async function createConsoleTestDatabase(secretLetter: string): Promise<TestDatabase> {
  const db = await createTestDatabase();
  process.env.DATABASE_URL = db.url;
  process.env.ONCEBOARD_SECRET = secretLetter.repeat(40);
  process.env.ONCEBOARD_RATE_LIMIT_PER_MINUTE = "1000000";
  process.env.ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE = "1000000";
  process.env.ONCEBOARD_SIGN_IN_RATE_LIMIT_PER_MINUTE = "1000000";
  return db;
}
