import { randomBytes } from "node:crypto";
import * as mariadb from "mariadb";
import mysql from "mysql2/promise";
import pg from "pg";
import { createTestDatabase } from "../../../test/database";
import type { EffectsDb } from "../db";
import { DEFAULT_SCHEMA, migrate } from "../index";
import { type MariadbPoolLike, type MysqlPoolLike, mysqlHandleOf } from "../mysql";

/**
 * The library's contract suite runs on every engine the library supports: PostgreSQL (the test
 * run's server, test/database.ts) and MariaDB / MySQL (MARIADB_URL, else the machine's MariaDB at
 * mysql://root@127.0.0.1:3306); engine-suite.ts runs a file's tests once per engine. Each test file
 * gets a database of its own on each engine: on
 * MariaDB a scratch database, migrated, which is also the library's schema (MySQL's schema is a
 * database), dropped afterwards.
 */

export const ENGINES = ["postgres", "mariadb"] as const;
export type Engine = (typeof ENGINES)[number];

/**
 * The driver the library is handed on an engine: pg on PostgreSQL; mysql2 or the `mariadb` driver
 * (what Prisma's @prisma/adapter-mariadb runs on) on MariaDB. A variant is an engine and a driver;
 * `mariadb-driver` is MariaDB through the `mariadb` driver, with that driver's defaults
 * (CLIENT_FOUND_ROWS on among them), as a user's pool has them.
 */
export type Driver = "pg" | "mysql2" | "mariadb";
export type EngineVariant = Engine | "mariadb-driver";
/** The core suites' variants: every engine, and MariaDB once more through the `mariadb` driver. */
export const ENGINES_AND_DRIVERS: readonly EngineVariant[] = ["postgres", "mariadb", "mariadb-driver"];
export const engineOf = (variant: EngineVariant): Engine => (variant === "postgres" ? "postgres" : "mariadb");
export const driverOf = (variant: EngineVariant): Driver =>
  variant === "postgres" ? "pg" : variant === "mariadb-driver" ? "mariadb" : "mysql2";

export const DEFAULT_MARIADB_URL = "mysql://root@127.0.0.1:3306";
export const testMariadbUrl = () => process.env.MARIADB_URL || DEFAULT_MARIADB_URL;

/** SQL for the test's own statements: one text for both engines, or one per engine. */
export type Dialect = string | { pg: string; mysql: string };

/** A handle of either engine the test application writes through: a pool, a pg client, a mysql2 or mariadb connection. */
export type AppHandle =
  | pg.Pool
  | pg.PoolClient
  | pg.Client
  | MysqlPoolLike
  | MariadbPoolLike
  | { execute: MysqlPoolLike["execute"] }
  | mariadb.Connection;

/** `$1 … $n` (each bound by number, repeats allowed) as `?` with the values in order, for mysql2; `?` text as it is. */
function positional(text: string, values: readonly unknown[]): { text: string; values: unknown[] } {
  if (!/\$\d/.test(text)) return { text, values: [...values] };
  const ordered: unknown[] = [];
  const out = text.replace(/\$(\d+)/g, (_m, n: string) => {
    ordered.push(values[Number(n) - 1]);
    return "?";
  });
  return { text: out, values: ordered };
}

function textFor(sql: Dialect, engine: Engine): string {
  return typeof sql === "string" ? sql : engine === "postgres" ? sql.pg : sql.mysql;
}

/** The rows of the application's statement on `handle` (either engine). */
export async function appRows<R = Record<string, unknown>>(
  handle: AppHandle,
  sql: Dialect,
  values: unknown[] = [],
): Promise<R[]> {
  const mysqlHandle = mysqlHandleOf(handle);
  if (mysqlHandle || typeof (handle as { execute?: unknown }).execute === "function") {
    const q = positional(textFor(sql, "mariadb"), values);
    const [rows] = await ((mysqlHandle ?? handle) as MysqlPoolLike).query(q.text, q.values);
    return Array.isArray(rows) ? (rows as R[]) : [];
  }
  const result = await (handle as pg.Pool).query(textFor(sql, "postgres"), values);
  return result.rows as R[];
}

/** The rows the application's statement changed on `handle` (either engine). */
export async function appRun(handle: AppHandle, sql: Dialect, values: unknown[] = []): Promise<number> {
  const mysqlHandle = mysqlHandleOf(handle);
  if (mysqlHandle || typeof (handle as { execute?: unknown }).execute === "function") {
    const q = positional(textFor(sql, "mariadb"), values);
    const [header] = await ((mysqlHandle ?? handle) as MysqlPoolLike).query(q.text, q.values);
    return Number((header as { affectedRows?: number }).affectedRows ?? 0);
  }
  return (await (handle as pg.Pool).query(textFor(sql, "postgres"), values)).rowCount ?? 0;
}

/** One effects row, the same shape on either engine: instants as Dates, the outcome parsed. */
export interface EffectRow {
  tenant_id: string;
  key: string;
  job_type: string;
  status: string;
  policy: string;
  attempt: number;
  owner: string | null;
  lease_until: Date | null;
  first_message_id: string | null;
  last_message_id: string | null;
  request_hash: string | null;
  outcome: unknown;
  error: string | null;
  created_at: Date;
  completed_at: Date | null;
  duplicate_count: number;
  last_duplicate_at: Date | null;
  max_gap_seconds: number | null;
  marked: boolean;
}

/** A row of either engine as EffectRow: MariaDB's outcome is JSON text (PostgreSQL's jsonb arrives parsed), its booleans 0/1. */
function effectRow(raw: Record<string, unknown>, engine: Engine): EffectRow {
  const outcome = raw.outcome;
  return {
    ...(raw as unknown as EffectRow),
    attempt: Number(raw.attempt),
    outcome: engine === "mariadb" && typeof outcome === "string" ? JSON.parse(outcome) : (outcome ?? null),
    duplicate_count: Number(raw.duplicate_count),
    max_gap_seconds: raw.max_gap_seconds === null ? null : Number(raw.max_gap_seconds),
    marked: Boolean(raw.marked),
  };
}

/** A caller's open transaction on either engine. */
export interface OpenTransaction {
  /** The connection inside the transaction: the `tx` a transactional step joins. */
  readonly tx: AppHandle;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  /** Back to the pool (rolled back first if still open). */
  release(): void;
}

/** A test file's database on one engine, and what the tests do with it. */
export interface EngineDatabase {
  readonly engine: Engine;
  /** The driver of `pool`, newPool()'s pools and begin()'s connections. */
  readonly driver: Driver;
  /** The handle the library takes (createEffects, migrate, maintain): a pg.Pool, a mysql2/promise pool or a mariadb pool. */
  readonly pool: EffectsDb & AppHandle;
  /** The library's schema there: `onceboard` on PostgreSQL, the scratch database on MariaDB. */
  readonly schema: string;
  /** A URL for another process or pool, the library's tables reachable unqualified. */
  readonly url: string;
  /** The test's own statement on its own connections: its rows. */
  rows<R = Record<string, unknown>>(sql: Dialect, values?: unknown[]): Promise<R[]>;
  /** The test's own statement: the rows it changed. */
  run(sql: Dialect, values?: unknown[]): Promise<number>;
  /** Several statements, one after another (MariaDB's connections take one statement per query). */
  script(sql: { pg: string; mysql: string[] }): Promise<void>;
  /** A pool of the library's kind with `max` connections of its own (close it with closePool). */
  newPool(max: number, options?: { name?: string }): EffectsDb & AppHandle;
  closePool(pool: unknown): Promise<void>;
  /** A connection of the pool inside a transaction of its own (BEGIN / beginTransaction), to hand to a transactional step as `tx`. */
  begin(): Promise<OpenTransaction>;
  /** Claims waiting on a lock (PostgreSQL backends waiting on an advisory lock; MariaDB sessions inside a row-locking statement). */
  lockWaits(): Promise<number>;
  /** The effect's rows (one, or none). */
  effects(tenant: string, key: string): Promise<EffectRow[]>;
  /** Ends an in-progress claim's lease now, as if its owner died long ago. */
  expireLease(tenant: string, key: string): Promise<void>;
  /** Cuts every open connection of a pool newPool() made, from the server's side (pg_terminate_backend, KILL CONNECTION). */
  killConnections(pool: unknown): Promise<number>;
  drop(): Promise<void>;
}

const MYSQL_POOL_DEFAULTS = { timezone: "Z", supportBigNumbers: true } as const;

/** The server-side ids of each pool's open connections (pg's backend pid, MySQL's connection id). */
const connectionIds = new WeakMap<object, Set<number>>();

async function postgresDatabase(poolSize: number): Promise<EngineDatabase> {
  const db = await createTestDatabase({ poolSize });
  const pools = new Set<pg.Pool>();
  return {
    engine: "postgres",
    driver: "pg",
    pool: db.pool,
    schema: DEFAULT_SCHEMA,
    url: db.sqlUrl,
    rows: async (sql, values = []) => (await db.pool.query(textFor(sql, "postgres"), values)).rows,
    run: async (sql, values = []) => (await db.pool.query(textFor(sql, "postgres"), values)).rowCount ?? 0,
    script: async (sql) => {
      await db.pool.query(sql.pg);
    },
    newPool(max, options = {}) {
      const pool = new pg.Pool({ connectionString: db.sqlUrl, max, application_name: options.name ?? "onceboard-test" });
      pool.on("error", () => {});
      const ids = new Set<number>();
      connectionIds.set(pool, ids);
      pool.on("connect", (client) => {
        const pid = (client as unknown as { processID?: number }).processID;
        if (pid) ids.add(pid);
        client.on("end", () => pid && ids.delete(pid));
      });
      pools.add(pool);
      return pool;
    },
    async closePool(pool) {
      pools.delete(pool as pg.Pool);
      await (pool as pg.Pool).end().catch(() => {});
    },
    async begin() {
      const client = await db.pool.connect();
      await client.query("BEGIN");
      return {
        tx: client,
        commit: async () => void (await client.query("COMMIT")),
        rollback: async () => void (await client.query("ROLLBACK")),
        release: () => client.release(),
      };
    },
    async lockWaits() {
      const { rows } = await db.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND datname = current_database()",
      );
      return rows[0]?.n ?? 0;
    },
    async effects(tenant, key) {
      const { rows } = await db.pool.query("SELECT * FROM effects WHERE tenant_id = $1 AND key = $2", [tenant, key]);
      return rows.map((row) => effectRow(row, "postgres"));
    },
    async expireLease(tenant, key) {
      const { rowCount } = await db.pool.query(
        "UPDATE effects SET lease_until = now() - interval '1 second' WHERE tenant_id = $1 AND key = $2 AND status = 'in_progress'",
        [tenant, key],
      );
      if (rowCount !== 1) throw new Error(`expireLease: ${rowCount} in-progress claims of ${tenant}/${key}`);
    },
    async killConnections(pool) {
      const ids = [...(connectionIds.get(pool as object) ?? [])];
      const { rows } = await db.pool.query<{ n: number }>(
        "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM unnest($1::int[]) AS pid",
        [ids],
      );
      return rows[0]?.n ?? 0;
    },
    async drop() {
      for (const pool of pools) await pool.end().catch(() => {});
      await db.drop();
    },
  };
}

/**
 * A mysql2/promise pool on `database` (the tests' own connections and the library's alike), with
 * the drivers' defaults otherwise: CLIENT_FOUND_ROWS on, as a user's pool has it.
 */
export function mariadbPool(url: string, database: string, max: number): mysql.Pool {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  const pool = mysql.createPool({ uri: parsed.toString(), connectionLimit: max, ...MYSQL_POOL_DEFAULTS });
  const ids = new Set<number>();
  connectionIds.set(pool, ids);
  // Each connection's server-side id, so a test can cut it (KILL CONNECTION) as a failover would.
  pool.pool.on("connection", (connection: { threadId: number | null; on(event: string, fn: () => void): void }) => {
    const id = connection.threadId;
    if (id === null) return;
    ids.add(id);
    connection.on("end", () => ids.delete(id));
  });
  return pool;
}

/**
 * A `mariadb` driver pool on `database` with that driver's defaults (CLIENT_FOUND_ROWS on, BIGINT
 * as BigInt, JSON parsed) but the suite's UTC time zone, as a Prisma user's @prisma/adapter-mariadb pool.
 */
export function mariadbDriverPool(url: string, database: string, max: number): mariadb.Pool {
  const parsed = new URL(url);
  const pool = mariadb.createPool({
    host: parsed.hostname,
    port: Number(parsed.port || 3306),
    user: decodeURIComponent(parsed.username),
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    database,
    connectionLimit: max,
    timezone: "Z",
  });
  const ids = new Set<number>();
  connectionIds.set(pool, ids);
  pool.on("connection", (connection) => {
    if (connection.threadId !== null) ids.add(connection.threadId);
  });
  return pool;
}

/** A pool of `driver` on the scratch database. */
function driverPool(driver: Driver, url: string, database: string, max: number): mysql.Pool | mariadb.Pool {
  return driver === "mariadb" ? mariadbDriverPool(url, database, max) : mariadbPool(url, database, max);
}

async function mariadbDatabase(url: string, poolSize: number, driver: Driver): Promise<EngineDatabase> {
  const name = `ob_t${process.pid}_${randomBytes(4).toString("hex")}`;
  const admin = await mysql.createConnection({ uri: url, ...MYSQL_POOL_DEFAULTS });
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name} DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin`);
  } finally {
    await admin.end();
  }
  // The test's own statements go through mysql2; the library's pools are of the variant's driver.
  const pool = mariadbPool(url, name, poolSize);
  const libraryPool = driver === "mysql2" ? pool : driverPool(driver, url, name, poolSize);
  await migrate(libraryPool as unknown as MysqlPoolLike, { schema: name });
  const pools = new Set<mysql.Pool | mariadb.Pool>([pool, libraryPool]);
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  // A child process (poolForUrl) picks the driver by the scheme.
  if (driver === "mariadb") parsed.protocol = "mariadb:";
  const rows = async <R>(sql: Dialect, values: unknown[] = []) => appRows<R>(pool as unknown as AppHandle, sql, values);
  const run = (sql: Dialect, values: unknown[] = []) => appRun(pool as unknown as AppHandle, sql, values);
  return {
    engine: "mariadb",
    driver,
    pool: libraryPool as unknown as EffectsDb & AppHandle,
    schema: name,
    url: parsed.toString(),
    rows,
    run,
    async script(sql) {
      for (const statement of sql.mysql) await pool.query(statement);
    },
    newPool(max) {
      const extra = driverPool(driver, url, name, max);
      pools.add(extra);
      return extra as unknown as EffectsDb & AppHandle;
    },
    async closePool(extra) {
      pools.delete(extra as mysql.Pool);
      await (extra as mysql.Pool).end().catch(() => {});
    },
    async begin() {
      // The caller's transaction on a connection of the variant's driver: the `tx` a step joins.
      const connection = await (libraryPool as mysql.Pool).getConnection();
      await connection.beginTransaction();
      return {
        tx: connection as unknown as AppHandle,
        commit: () => connection.commit(),
        rollback: () => connection.rollback(),
        release: () => void connection.release(),
      };
    },
    async lockWaits() {
      // The sessions of this database inside a claim's row-locking statement (the INSERT … ON DUPLICATE
      // KEY UPDATE, or a SELECT … FOR UPDATE) or a plain INSERT: with a holder in the way, each waits
      // there. Read from PROCESSLIST: INNODB_TRX, refreshed from a cache, was seen to list none of
      // fifty waiters that SHOW ENGINE INNODB STATUS showed in LOCK WAIT.
      const [row] = await rows<{ n: number }>(
        `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST
          WHERE DB = ? AND ID <> CONNECTION_ID() AND COMMAND IN ('Query', 'Execute') AND (INFO LIKE 'INSERT INTO%' OR INFO LIKE '%FOR UPDATE%')`,
        [name],
      );
      return Number(row?.n ?? 0);
    },
    async effects(tenant, key) {
      return (await rows<Record<string, unknown>>("SELECT * FROM effects WHERE tenant_id = ? AND `key` = ?", [tenant, key])).map(
        (row) => effectRow(row, "mariadb"),
      );
    },
    async expireLease(tenant, key) {
      const n = await run(
        "UPDATE effects SET lease_until = UTC_TIMESTAMP(3) - INTERVAL 1 SECOND WHERE tenant_id = ? AND `key` = ? AND status = 'in_progress'",
        [tenant, key],
      );
      if (n !== 1) throw new Error(`expireLease: ${n} in-progress claims of ${tenant}/${key}`);
    },
    async killConnections(extra) {
      const ids = [...(connectionIds.get(extra as object) ?? [])];
      let killed = 0;
      for (const id of ids) {
        await pool.query(`KILL CONNECTION ${Number(id)}`).then(
          () => killed++,
          () => {},
        );
      }
      return killed;
    },
    async drop() {
      for (const p of pools) await p.end().catch(() => {});
      const cleanup = await mysql.createConnection({ uri: url });
      try {
        await cleanup.query(`DROP DATABASE IF EXISTS ${name}`);
      } finally {
        await cleanup.end();
      }
    },
  };
}

/**
 * A pool of the library's kind for a test database's URL (engines' `url`), in a child process: a
 * pg.Pool, or a mysql2 pool on the URL's database; and the library's schema there.
 */
export function poolForUrl(url: string, max: number): { pool: EffectsDb & AppHandle; schema: string } {
  if (/^mariadb:/.test(url)) {
    const database = new URL(url).pathname.slice(1);
    const plain = url.replace(/^mariadb:/, "mysql:");
    return { pool: mariadbDriverPool(plain, database, max) as unknown as EffectsDb & AppHandle, schema: database };
  }
  if (/^mysql:/.test(url)) {
    const database = new URL(url).pathname.slice(1);
    return { pool: mariadbPool(url, database, max) as unknown as EffectsDb & AppHandle, schema: database };
  }
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on("error", () => {});
  return { pool, schema: DEFAULT_SCHEMA };
}

/** A database of its own on `variant`'s engine, the library migrated into it (MariaDB: at MARIADB_URL or the default). */
export async function createEngineDatabase(variant: EngineVariant, options: { poolSize?: number } = {}): Promise<EngineDatabase> {
  const poolSize = options.poolSize ?? 10;
  if (variant === "postgres") return postgresDatabase(poolSize);
  return mariadbDatabase(testMariadbUrl(), poolSize, driverOf(variant));
}

/** The fake provider's and the orders' tables (helpers.ts: PROVIDER_DDL) on either engine. */
export const PROVIDER_TABLES = {
  mysql: [
    `CREATE TABLE IF NOT EXISTS fake_provider_charges (idempotency_key VARCHAR(255) PRIMARY KEY, order_id VARCHAR(255) NOT NULL,
       cents INT NOT NULL, charge_id VARCHAR(64) NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS fake_provider_requests (id BIGINT AUTO_INCREMENT PRIMARY KEY, idempotency_key VARCHAR(255),
       order_id VARCHAR(255) NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS orders (id VARCHAR(255) PRIMARY KEY, status VARCHAR(32) NOT NULL DEFAULT 'pending',
       paid_count INT NOT NULL DEFAULT 0, charge_id VARCHAR(64))`,
    `CREATE TABLE IF NOT EXISTS sent_mail (id BIGINT AUTO_INCREMENT PRIMARY KEY, order_id VARCHAR(255) NOT NULL, kind VARCHAR(64) NOT NULL)`,
  ],
};
