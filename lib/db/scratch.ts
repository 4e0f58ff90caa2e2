import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";

/** A throw-away database: tests, the soak, the benchmarks and the browser tests each make theirs with this. */
export interface ScratchDatabase {
  name: string;
  url: string;
  /** DROP DATABASE … WITH (FORCE): connections still open after a short wait for closing ones are cut. */
  drop(): Promise<void>;
}

/** `url` with its database replaced by `database`. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function onAdmin<T>(adminUrl: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * CREATE DATABASE on the server `adminUrl` names, empty or as a copy of `template` (CREATE DATABASE
 * … TEMPLATE copies files: fast, no migrations re-run). Named `<prefix>_<random hex>`, or exactly
 * `name` (a leftover of that name, from a run that was killed, is dropped first).
 */
export async function createScratchDatabase(
  adminUrl: string,
  options: { prefix?: string; name?: string; template?: string } = {},
): Promise<ScratchDatabase> {
  const name = options.name ?? `${options.prefix ?? "onceboard_scratch"}_${randomBytes(5).toString("hex")}`;
  if (!/^[a-z_][a-z0-9_]*$/.test(name) || (options.template && !/^[a-z_][a-z0-9_]*$/.test(options.template))) {
    throw new Error(`not a plain database name: ${name}${options.template ? ` / ${options.template}` : ""}`);
  }
  await onAdmin(adminUrl, async (admin) => {
    if (options.name) await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`); // a killed run's leftover
    await admin.query(
      `CREATE DATABASE ${pg.escapeIdentifier(name)}${options.template ? ` TEMPLATE ${pg.escapeIdentifier(options.template)}` : ""}`,
    );
  });
  // The URL a user would give: no search_path. Code that names tables unqualified must set its own
  // (the console's pools do, lib/db/pool.ts), so a table it forgot fails here as in production.
  return { name, url: withDatabase(adminUrl, name), drop: () => dropDatabase(adminUrl, name) };
}

/**
 * How long a drop waits for the database's connections to finish closing before it cuts them.
 * Closing ones were gone within 20 ms in a full test run on 2 busy cores; the wait is paid in full
 * only where something left its connections open, and those are cut as before.
 */
const CLOSING_CONNECTIONS_WAIT_MS = 500;

/**
 * DROP DATABASE IF EXISTS … WITH (FORCE): a scratch database, also one a killed run left behind.
 * Waits (up to CLOSING_CONNECTIONS_WAIT_MS) for the connections still on it to go first. Why:
 * pg-pool's end() resolves once its clients are told to close, not once their sockets have; a
 * backend that FORCE terminates before it read the client's Terminate sends FATAL 57P01 to a client
 * with no query in flight, an 'error' event on the pool that ended, which is an uncaught exception
 * in the process that owns it (seen in CI after a test's `await pool.end(); await db.drop()`).
 */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  await onAdmin(adminUrl, async (admin) => {
    const until = Date.now() + CLOSING_CONNECTIONS_WAIT_MS;
    for (;;) {
      const { rows } = await admin.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_catalog.pg_stat_activity WHERE datname = $1",
        [name],
      );
      if ((rows[0]?.n ?? 0) === 0 || Date.now() >= until) break;
      await sleep(10);
    }
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  });
}

/**
 * A throw-away database on a MySQL or MariaDB server (`adminUrl` a mysql:// URL): CREATE DATABASE
 * with a binary, no-pad collation as the library's schema expects (`utf8mb4_nopad_bin`; on MySQL 8
 * `utf8mb4_0900_bin`). Named `<prefix>_<random hex>`, or exactly `name` (a leftover is dropped
 * first). `drop()` is DROP DATABASE IF EXISTS: MySQL has no FORCE, so end the pools on it first.
 * mysql2 is loaded on first use, so the PostgreSQL-only callers of this file never load it.
 */
export async function createMysqlScratchDatabase(
  adminUrl: string,
  options: { prefix?: string; name?: string } = {},
): Promise<ScratchDatabase> {
  const name = options.name ?? `${options.prefix ?? "onceboard_scratch"}_${randomBytes(5).toString("hex")}`;
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  await onMysqlAdmin(adminUrl, async (admin) => {
    const [[{ version }]] = (await admin.query("SELECT VERSION() AS version")) as unknown as [[{ version: string }]];
    const collation = /mariadb/i.test(version) ? "utf8mb4_nopad_bin" : "utf8mb4_0900_bin";
    if (options.name) await admin.query(`DROP DATABASE IF EXISTS \`${name}\``); // a killed run's leftover
    await admin.query(`CREATE DATABASE \`${name}\` DEFAULT CHARACTER SET utf8mb4 COLLATE ${collation}`);
  });
  return { name, url: withDatabase(adminUrl, name), drop: () => dropMysqlDatabase(adminUrl, name) };
}

/** DROP DATABASE IF EXISTS on a MySQL or MariaDB server: a scratch database, also a killed run's. */
export async function dropMysqlDatabase(adminUrl: string, name: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  await onMysqlAdmin(adminUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS \`${name}\``));
}

type MysqlAdmin = { query(sql: string): Promise<unknown>; end(): Promise<void> };

async function onMysqlAdmin<T>(adminUrl: string, use: (admin: MysqlAdmin) => Promise<T>): Promise<T> {
  const mysql = await import("mysql2/promise");
  const admin: MysqlAdmin = await mysql.createConnection({ uri: adminUrl, connectTimeout: 10_000 });
  try {
    return await use(admin);
  } finally {
    await admin.end().catch(() => {});
  }
}
