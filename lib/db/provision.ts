import path from "node:path";
import pg from "pg";
import { loadConfig } from "../config";
import { ensurePrivateDataDir } from "./data-dir";
import { consolePassword, runningEmbeddedUrl, startEmbeddedPostgres } from "./embedded";
import { describeDatabaseError } from "./errors";
import { migrateConsole } from "./migrate";
import { ensureEffectPartitions } from "./partitions";
import { withSearchPath } from "./pool";
import { consoleRoleProblem, EMBEDDED_CONSOLE_ROLE, ensureConsoleRole, grantConsoleRole, roleOfUrl, urlAsRole } from "./roles";

export interface ProvisionedDatabase {
  /** The owner's URL: migrations, the command-line tools. */
  url: string;
  embedded: boolean;
  /** Stops the embedded server when we started one; a no-op for DATABASE_URL. */
  stop(): Promise<void>;
}

/** What provisionDatabase also knows: how the console logs in (lib/db/roles.ts). */
export interface ProvisionedConsoleDatabase extends ProvisionedDatabase {
  /** The console role's URL (CONSOLE_DATABASE_URL, the embedded console role, else the owner's). */
  consoleUrl: string;
  /** The console role's name when it is not the owner (the demo's schemas are handed to it). */
  consoleRole: string | undefined;
}

/** host:port/database of a URL, for comparing two. */
function databaseOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || "5432"}${parsed.pathname}`;
}

/** Fails fast with one clear line when the server is not there. */
export async function assertReachable(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (error) {
    throw new Error(describeDatabaseError(error, url));
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * What `npm start`, `npm run dev` and `npm run db:migrate` share: DATABASE_URL when set (nothing
 * started), otherwise the embedded server under ONCEBOARD_DATA_DIR/pg; then migrations as the
 * owner, the console role's grants (lib/db/roles.ts: the embedded default makes the role) and the
 * startup partitions (yesterday … +7 days), made as the console role, which maintains them.
 */
export async function provisionDatabase(
  options: { log?: (line: string) => void; migrateOnly?: boolean } = {},
): Promise<ProvisionedConsoleDatabase> {
  const log = options.log ?? (() => {});
  const config = loadConfig();
  let url = config.DATABASE_URL;
  let consoleUrl = config.CONSOLE_DATABASE_URL;
  let consoleRole: string | undefined;
  /** Set when the embedded default makes the console role: its password (kept in the cluster). */
  let embeddedConsolePassword: string | undefined;
  let stop = async () => {};
  const embedded = !url;
  if (!url && consoleUrl) {
    throw new Error("CONSOLE_DATABASE_URL is set without DATABASE_URL: set both, or neither for the embedded PostgreSQL");
  }
  if (url && consoleUrl && databaseOf(url) !== databaseOf(consoleUrl)) {
    // The grants are made in DATABASE_URL's database: the console must use that one.
    throw new Error(
      `CONSOLE_DATABASE_URL names ${databaseOf(consoleUrl)}, DATABASE_URL ${databaseOf(url)}: both must name the same server and database`,
    );
  }
  if (!url) {
    ensurePrivateDataDir(config.ONCEBOARD_DATA_DIR);
    const dataDir = path.join(config.ONCEBOARD_DATA_DIR, "pg");
    log(`starting embedded PostgreSQL in ${dataDir}`);
    const handle = await startEmbeddedPostgres({
      dataDir,
      onLog: config.LOG_LEVEL === "debug" || config.LOG_LEVEL === "trace" ? (line) => log(`[postgres] ${line}`) : undefined,
    });
    url = handle.url;
    consoleRole = EMBEDDED_CONSOLE_ROLE;
    embeddedConsolePassword = await consolePassword(handle.clusterDir);
    consoleUrl = urlAsRole(handle.url, consoleRole, embeddedConsolePassword);
    stop = async () => {
      await handle.stop();
    };
    if (handle.clusterDir !== handle.dataDir) {
      log(
        `the postgres user cannot enter ${path.dirname(handle.dataDir)}: the cluster lives in ${handle.clusterDir} (${dataDir} links to it)`,
      );
    }
    log(`embedded PostgreSQL ready on 127.0.0.1:${handle.port}`);
  }
  try {
    await assertReachable(url);
    const result = await migrateConsole(url, {
      schema: config.ONCEBOARD_SCHEMA,
      onApplied: (name) => log(`applied migration ${name}`),
    });
    if (result.applied.length === 0) log(`migrations up to date (${result.alreadyApplied.length} applied)`);
    if (consoleUrl && !consoleRole && roleOfUrl(consoleUrl) !== roleOfUrl(url)) consoleRole = roleOfUrl(consoleUrl);
    consoleUrl ??= url;
    if (consoleRole) {
      const owner = new pg.Client({ connectionString: url, application_name: "onceboard-migrate" });
      await owner.connect();
      try {
        if (embeddedConsolePassword !== undefined) await ensureConsoleRole(owner, consoleRole, embeddedConsolePassword);
        await grantConsoleRole(owner, consoleRole, { schema: config.ONCEBOARD_SCHEMA });
      } finally {
        await owner.end();
      }
    }
    const problem = await consoleRoleProblem(consoleUrl, { schema: config.ONCEBOARD_SCHEMA }).catch((error: unknown) => {
      throw new Error(`the console's role cannot log in: ${describeDatabaseError(error, consoleUrl)}`);
    });
    if (problem) log(`warning: ${problem}`);
    const client = new pg.Client({ connectionString: withSearchPath(consoleUrl, [config.ONCEBOARD_SCHEMA]) });
    await client.connect();
    try {
      const created = await ensureEffectPartitions(client, { schema: config.ONCEBOARD_SCHEMA });
      if (created > 0) log(`created ${created} effects partitions`);
    } finally {
      await client.end();
    }
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }
  return { url, embedded, stop, consoleUrl, consoleRole };
}

/**
 * The database a command-line tool (`npm run token`, `retention`, `demo:verify`, …) works on:
 * DATABASE_URL when set; else the embedded server that a running `npm start` owns (found through
 * its postmaster.pid, which names the port), so the tool works beside the console instead of
 * failing on a cluster in use; else the embedded server, migrated and started for the duration of
 * the command (provisionDatabase). Its URL puts the library's schema first on the search path, as
 * the console's own pool does, since the read models name tables unqualified.
 */
export async function openDatabase(options: { log?: (line: string) => void } = {}): Promise<ProvisionedDatabase> {
  const config = loadConfig();
  const inSchema = (db: ProvisionedDatabase) => ({ ...db, url: withSearchPath(db.url, [config.ONCEBOARD_SCHEMA]) });
  if (!config.DATABASE_URL) {
    const url = await runningEmbeddedUrl(path.join(config.ONCEBOARD_DATA_DIR, "pg"));
    if (url) return inSchema({ url, embedded: true, stop: async () => {} });
  }
  return inSchema(await provisionDatabase(options));
}
