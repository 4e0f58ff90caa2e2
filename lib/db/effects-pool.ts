import mysql from "mysql2/promise";
import { loadConfig } from "../config";

declare global {
  var __onceboardEffectsMysqlPool: mysql.Pool | undefined;
  var __onceboardEffectsMaintenanceMysqlPool: mysql.Pool | undefined;
}

/** Where a MySQL effects store is: the server, and the database holding the worker library's tables. */
export interface MysqlEffectsTarget {
  url: string;
  /** The URL's database, else ONCEBOARD_SCHEMA (the library's `schema` option names the same database). */
  database: string;
}

/** EFFECTS_DATABASE_URL as a MySQL target, or null when the effects are in the console's PostgreSQL. */
export function mysqlEffectsTarget(env: Readonly<Record<string, string | undefined>> = process.env): MysqlEffectsTarget | null {
  const config = loadConfig(env);
  if (!config.EFFECTS_DATABASE_URL) return null;
  const database = new URL(config.EFFECTS_DATABASE_URL).pathname.replace(/^\//, "");
  return { url: config.EFFECTS_DATABASE_URL, database: database || config.ONCEBOARD_SCHEMA };
}

/**
 * The connection settings of every console pool on a MySQL effects store (the console's, tests'):
 * - `timezone: "Z"`: DATETIME(3) values are UTC (the library writes UTC_TIMESTAMP(3)), so they are
 *   read and bound as UTC instants whatever the machine's zone; each session's time_zone is UTC
 *   too, for the functions that read it;
 * - numbers as numbers: SUM() answers DECIMAL, COUNT() BIGINT; the console's counts stay far
 *   below 2^53, as pg's INT8 parser assumes (lib/db/pool.ts);
 * - a statement timeout per session, the console's CONSOLE_STATEMENT_TIMEOUT_MS (null: none, for
 *   maintenance, whose metadata locks wait on lock_wait_timeout instead): MariaDB's
 *   max_statement_time (seconds, every statement), MySQL's max_execution_time (ms, SELECTs).
 */
export function mysqlPoolOptions(options: {
  url: string;
  database: string;
  statementTimeoutMs: number | null;
  max: number;
}): mysql.PoolOptions {
  const url = new URL(options.url);
  return {
    host: url.hostname,
    port: url.port ? Number(url.port) : 3306,
    user: decodeURIComponent(url.username) || "root",
    password: decodeURIComponent(url.password) || undefined,
    database: options.database,
    connectionLimit: options.max,
    connectTimeout: 5000,
    timezone: "Z",
    dateStrings: false,
    decimalNumbers: true,
    supportBigNumbers: true,
    bigNumberStrings: false,
    charset: "utf8mb4",
  };
}

/** Runs the session settings on every new connection of `pool`, before any query of its borrower. */
export function initialiseMysqlSessions(pool: mysql.Pool, statementTimeoutMs: number | null): void {
  pool.pool.on("connection", (connection) => {
    const core = connection as unknown as {
      query(sql: string, callback: (error: unknown) => void): void;
      _handshakePacket?: { serverVersion?: string };
    };
    // Errors are the next query's to report: a connection whose settings fail answers nothing else.
    const ignore = () => {};
    core.query("SET time_zone = '+00:00'", ignore);
    if (statementTimeoutMs === null) return;
    const mariadb = /mariadb/i.test(core._handshakePacket?.serverVersion ?? "");
    core.query(
      mariadb
        ? `SET SESSION max_statement_time = ${statementTimeoutMs / 1000}`
        : `SET SESSION max_execution_time = ${Math.round(statementTimeoutMs)}`,
      ignore,
    );
  });
}

/** A pool on a MySQL effects store with the console's session settings. */
export function createMysqlEffectsPool(options: {
  url: string;
  database: string;
  statementTimeoutMs: number | null;
  max: number;
}): mysql.Pool {
  const pool = mysql.createPool(mysqlPoolOptions(options));
  initialiseMysqlSessions(pool, options.statementTimeoutMs);
  // An idle connection the server closed: the pool replaces it; queries report their own errors.
  pool.pool.on("error", () => {});
  return pool;
}

/**
 * The console's one pool on the MySQL effects store per process, anchored on globalThis like the
 * PostgreSQL pool (lib/db/pool.ts), with its statement timeout. Null when EFFECTS_DATABASE_URL is
 * unset.
 */
export function getEffectsMysqlPool(): { pool: mysql.Pool; database: string } | null {
  const target = mysqlEffectsTarget();
  if (!target) return null;
  globalThis.__onceboardEffectsMysqlPool ??= createMysqlEffectsPool({
    ...target,
    statementTimeoutMs: loadConfig().CONSOLE_STATEMENT_TIMEOUT_MS,
    max: 10,
  });
  return { pool: globalThis.__onceboardEffectsMysqlPool, database: target.database };
}

/**
 * The console's pool for maintenance on the MySQL effects store (the library's maintain() and
 * planMaintenance()): small, and without the console's statement timeout (a DROP PARTITION waits
 * on its metadata lock, bounded by lock_wait_timeout, and expired effects are deleted in paced
 * batches). Null when EFFECTS_DATABASE_URL is unset.
 */
export function getEffectsMaintenanceMysqlPool(): { pool: mysql.Pool; database: string } | null {
  const target = mysqlEffectsTarget();
  if (!target) return null;
  globalThis.__onceboardEffectsMaintenanceMysqlPool ??= createMysqlEffectsPool({ ...target, statementTimeoutMs: null, max: 3 });
  return { pool: globalThis.__onceboardEffectsMaintenanceMysqlPool, database: target.database };
}

/** Ends this process's pools on the MySQL effects store (a command-line tool, before it exits). */
export async function closeEffectsMysqlPools(): Promise<void> {
  const pools = [globalThis.__onceboardEffectsMysqlPool, globalThis.__onceboardEffectsMaintenanceMysqlPool];
  globalThis.__onceboardEffectsMysqlPool = undefined;
  globalThis.__onceboardEffectsMaintenanceMysqlPool = undefined;
  await Promise.all(pools.map((pool) => pool?.end().catch(() => {})));
}
