import fs from "node:fs";
import path from "node:path";
import mysql from "mysql2/promise";
import type pg from "pg";
import { type EffectsDb, migrate } from "../idempotency";
import type { DemoStore } from "./settings";

/**
 * The demo shop's own database: its orders, accounting entries and unsent receipts, and beside them
 * the worker library's effects. They are on one server because mark-paid is a transactional step:
 * the order's update and its accounting entry commit in the transaction that completes the claim.
 * On PostgreSQL (the default) that is the demo's database; with DEMO_STORE=mariadb (`npm start --
 * --store mariadb`, `npm run soak -- --store mariadb`) a MariaDB / MySQL database, the library's
 * MySQL store. The broker (pg-boss), the dead-letter parking and the demo's provider keep their
 * tables in the demo's PostgreSQL either way: they are not the shop's.
 */

/** The demo's database on MARIADB_URL's server when the URL names none: its library and shop tables. */
const DEMO_MARIADB_DATABASE = "onceboard_demo";
/** Set by the demo's supervisor for its children: the shop's MariaDB database, as a URL. */
export const DEMO_SHOP_URL_ENV = "ONCEBOARD_DEMO_SHOP_URL";

/**
 * One of the shop's statements in each engine's SQL, parameters `$1…$n` in both (bound by number;
 * MySQL's may use `?`). `pg: null`: a statement only a MariaDB shop runs (mariadbOnly).
 */
export interface ShopStatement {
  pg: string | null;
  mysql: string;
}

/** A statement only the MariaDB shop has a use for (a PostgreSQL shop refuses it). */
export const mariadbOnly = (mysql: string): ShopStatement => ({ pg: null, mysql });

export interface Shop {
  readonly store: DemoStore;
  /** What createEffects and migrate take: the shop's pool, and the library's schema on it (MySQL: the database). */
  readonly effects: { db: EffectsDb; schema?: string };
  /** Where the shop is, safe to print. */
  readonly describe: string;
  rows<R>(statement: ShopStatement, values?: unknown[]): Promise<R[]>;
  /** Rows changed. */
  run(statement: ShopStatement, values?: unknown[]): Promise<number>;
  /** The statement inside a transactional step: `tx` is what the library handed the step (a pg PoolClient, a mysql2 connection). */
  rowsIn<R>(tx: unknown, statement: ShopStatement, values?: unknown[]): Promise<R[]>;
  /** The constraint a duplicate-key error names (PostgreSQL's 23505, MySQL's 1062), or null for any other error. */
  duplicateKeyOf(error: unknown): string | null;
  /** Ends the pool the shop opened (a PostgreSQL shop's pool is its caller's, left open). */
  close(): Promise<void>;
}

/**
 * `$1 … $n` (each bound by number, repeats allowed) as `?` with the values in that order, for
 * mysql2; a text already written with `?` goes as it is.
 */
function positional(text: string, values: readonly unknown[]): { text: string; values: unknown[] } {
  if (!/\$\d/.test(text)) return { text, values: [...values] };
  const ordered: unknown[] = [];
  const out = text.replace(/\$(\d+)/g, (_m, n: string) => {
    ordered.push(values[Number(n) - 1]);
    return "?";
  });
  return { text: out, values: ordered };
}

/** The shop on the demo's PostgreSQL pool (the pool stays its caller's). */
export function postgresShop(pool: pg.Pool): Shop {
  const query = async <R>(handle: Pick<pg.Pool, "query">, statement: ShopStatement, values: unknown[] = []) => {
    if (statement.pg === null)
      throw new Error(`a MariaDB-only statement on the PostgreSQL shop: ${statement.mysql.slice(0, 60)}`);
    return (await handle.query(statement.pg, values)) as unknown as pg.QueryResult & { rows: R[] };
  };
  return {
    store: "postgres",
    effects: { db: pool },
    describe: "PostgreSQL (the demo's database)",
    rows: async (statement, values) => (await query(pool, statement, values)).rows,
    run: async (statement, values) => (await query(pool, statement, values)).rowCount ?? 0,
    rowsIn: async (tx, statement, values) => (await query(tx as pg.PoolClient, statement, values)).rows,
    duplicateKeyOf(error) {
      const e = error as { code?: unknown; constraint?: unknown } | null;
      return e?.code === "23505" ? String(e.constraint ?? "unknown") : null;
    },
    close: async () => {},
  };
}

/** Whether the shop's tables are there (demo:reset drops them, the demo's start makes them). */
export async function shopTablesPresent(shop: Shop): Promise<boolean> {
  const [row] = await shop.rows<{ n: number }>({
    pg: "SELECT (to_regclass('demo_orders') IS NOT NULL)::int AS n",
    mysql: "SELECT count(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'demo_orders'",
  });
  return Number(row?.n) === 1;
}

/** The database a MariaDB shop URL names (its path), or `fallback`. */
function mariadbDatabaseOf(url: string, fallback = DEMO_MARIADB_DATABASE): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\//, ""));
  return name === "" ? fallback : name;
}

/** The demo's MariaDB database on MARIADB_URL's server: the URL's path, else onceboard_demo. */
export function demoMariadbUrl(mariadbUrl: string): string {
  return mariadbUrlFor(mariadbUrl, mariadbDatabaseOf(mariadbUrl));
}

/** `serverUrl` pointed at `database`. */
export function mariadbUrlFor(serverUrl: string, database: string): string {
  const url = new URL(serverUrl.replace(/^mariadb:/, "mysql:"));
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * A mysql2 promise pool as the library wants one: CLIENT_FOUND_ROWS off (a write's count is the
 * rows it changed), instants read and written as UTC, DECIMAL sums as numbers.
 */
function createShopMysqlPool(url: string, max: number): mysql.Pool {
  return mysql.createPool({
    uri: url.replace(/^mariadb:/, "mysql:"),
    connectionLimit: max,
    flags: ["-FOUND_ROWS"],
    timezone: "Z",
    decimalNumbers: true,
  });
}

const DUPLICATE_KEY = /for key '([^']+)'\s*$/;

/** The shop on a MariaDB / MySQL database (`url` names it), with a pool of its own of `max` connections. */
export function mariadbShop(url: string, options: { max: number }): Shop {
  const database = mariadbDatabaseOf(url);
  const pool = createShopMysqlPool(mariadbUrlFor(url, database), options.max);
  const query = async (handle: Pick<mysql.Pool, "query">, statement: ShopStatement, values: unknown[] = []) => {
    const q = positional(statement.mysql, values);
    const [result] = await handle.query(q.text, q.values);
    return result;
  };
  const redacted = new URL(url);
  if (redacted.password) redacted.password = "***";
  return {
    store: "mariadb",
    effects: { db: pool as unknown as EffectsDb, schema: database },
    describe: `MariaDB database ${database} on ${redacted.host}`,
    rows: async <R>(statement: ShopStatement, values?: unknown[]) => {
      const result = await query(pool, statement, values);
      return (Array.isArray(result) ? result : []) as R[];
    },
    run: async (statement, values) =>
      Number(((await query(pool, statement, values)) as { affectedRows?: number }).affectedRows ?? 0),
    rowsIn: async <R>(tx: unknown, statement: ShopStatement, values?: unknown[]) => {
      const result = await query(tx as mysql.PoolConnection, statement, values);
      return (Array.isArray(result) ? result : []) as R[];
    },
    duplicateKeyOf(error) {
      const e = error as { errno?: unknown; sqlMessage?: unknown } | null;
      if (e?.errno !== 1062) return null;
      const name = DUPLICATE_KEY.exec(String(e.sqlMessage ?? ""))?.[1] ?? "unknown";
      // MySQL 8 names the key as table.key.
      return name.slice(name.lastIndexOf(".") + 1);
    },
    close: () => pool.end().catch(() => {}),
  };
}

const MYSQL_SCHEMA_SQL = path.join(import.meta.dirname, "schema-mysql.sql");

/** schema-mysql.sql's statements (each ends with `;` at the end of a line; comments dropped). */
function mariadbShopStatements(): string[] {
  return fs
    .readFileSync(MYSQL_SCHEMA_SQL, "utf8")
    .split(/;\s*$/m)
    .map((s) => s.replace(/^\s*--.*$/gm, "").trim())
    .filter((s) => s !== "");
}

/**
 * Makes the MariaDB database `url` names ready for the demo (idempotent, at every start): the
 * database itself and the worker library's tables there (migrate(), its MySQL store, creates the
 * database when missing, with the binary collation each server calls by its own name), then the
 * shop's tables.
 */
export async function prepareMariadbShop(url: string): Promise<void> {
  const database = mariadbDatabaseOf(url);
  // On the server, not the database: the database may not be there yet.
  const server = createShopMysqlPool(mariadbUrlFor(url, ""), 2);
  try {
    await migrate(server as unknown as Parameters<typeof migrate>[0], { schema: database });
  } finally {
    await server.end().catch(() => {});
  }
  const pool = createShopMysqlPool(mariadbUrlFor(url, database), 2);
  try {
    for (const statement of mariadbShopStatements()) await pool.query(statement);
  } finally {
    await pool.end().catch(() => {});
  }
}

/**
 * The shop of a demo process (worker, producer) for its settings: the caller's PostgreSQL pool, or
 * the MariaDB database its supervisor named in ONCEBOARD_DEMO_SHOP_URL.
 */
export function demoShopFor(store: DemoStore, pool: pg.Pool, options: { max: number; env?: NodeJS.ProcessEnv }): Shop {
  if (store === "postgres") return postgresShop(pool);
  const url = (options.env ?? process.env)[DEMO_SHOP_URL_ENV];
  if (!url)
    throw new Error(`${DEMO_SHOP_URL_ENV} is not set: a demo process on MariaDB needs its shop's database (npm start sets it)`);
  return mariadbShop(url, { max: options.max });
}
