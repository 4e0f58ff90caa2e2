import path from "node:path";
import pg from "pg";
import { loadConfig } from "../config";
import { ensurePrivateDataDir } from "./data-dir";
import { runningEmbeddedUrl, startEmbeddedPostgres } from "./embedded";
import { describeDatabaseError } from "./errors";
import { migrate } from "./migrate";
import { ensureEffectPartitions } from "./partitions";
import { withSearchPath } from "./pool";

export interface ProvisionedDatabase {
  url: string;
  embedded: boolean;
  /** Stops the embedded server when we started one; a no-op for DATABASE_URL. */
  stop(): Promise<void>;
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
 * started), otherwise the embedded server under ONCEBOARD_DATA_DIR/pg; then migrations and the
 * startup partitions (yesterday … +7 days).
 */
export async function provisionDatabase(
  options: { log?: (line: string) => void; migrateOnly?: boolean } = {},
): Promise<ProvisionedDatabase> {
  const log = options.log ?? (() => {});
  const config = loadConfig();
  let url = config.DATABASE_URL;
  let stop = async () => {};
  const embedded = !url;
  if (!url) {
    ensurePrivateDataDir(config.ONCEBOARD_DATA_DIR);
    const dataDir = path.join(config.ONCEBOARD_DATA_DIR, "pg");
    log(`starting embedded PostgreSQL in ${dataDir}`);
    const handle = await startEmbeddedPostgres({
      dataDir,
      onLog: config.LOG_LEVEL === "debug" || config.LOG_LEVEL === "trace" ? (line) => log(`[postgres] ${line}`) : undefined,
    });
    url = handle.url;
    stop = () => handle.stop();
    if (handle.clusterDir !== handle.dataDir) {
      log(
        `the postgres user cannot enter ${path.dirname(handle.dataDir)}: the cluster lives in ${handle.clusterDir} (${dataDir} links to it)`,
      );
    }
    log(`embedded PostgreSQL ready on 127.0.0.1:${handle.port}`);
  }
  try {
    await assertReachable(url);
    const result = await migrate(url, {
      schema: config.ONCEBOARD_SCHEMA,
      onApplied: (name) => log(`applied migration ${name}`),
    });
    if (result.applied.length === 0) log(`migrations up to date (${result.alreadyApplied.length} applied)`);
    const client = new pg.Client({ connectionString: withSearchPath(url, [config.ONCEBOARD_SCHEMA]) });
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
  return { url, embedded, stop };
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
