import type mysql from "mysql2/promise";
import pg from "pg";
import { loadConfig } from "../../config";
import { getEffectsMaintenanceMysqlPool } from "../../db/effects-pool";
import { consolePoolConfig } from "../../db/pool";

declare global {
  var __onceboardMaintenancePool: pg.Pool | undefined;
}

/**
 * The console's pool for partition maintenance: small, and without the console's
 * statement_timeout (a DETACH … CONCURRENTLY waits for older transactions; each attempt is
 * bounded by lock_timeout instead), with the console pool's search_path. Anchored on globalThis like the
 * console pool.
 */
export function maintenancePool(): pg.Pool {
  if (!globalThis.__onceboardMaintenancePool) {
    const config = loadConfig();
    if (!config.DATABASE_URL) throw new Error("DATABASE_URL is not set: partition maintenance needs the database");
    const pool = new pg.Pool(
      consolePoolConfig({
        connectionString: config.DATABASE_URL,
        schema: config.ONCEBOARD_SCHEMA,
        statementTimeoutMs: null,
        max: 3,
        connectionTimeoutMillis: 5000,
        application_name: "onceboard-maintenance",
      }),
    );
    pool.on("error", () => {});
    globalThis.__onceboardMaintenancePool = pool;
  }
  return globalThis.__onceboardMaintenancePool;
}

/** Where the library's maintenance runs: the effects store's own engine, as its workers run it. */
export type MaintenanceTarget =
  | { engine: "postgres"; pool: pg.Pool }
  | { engine: "mysql"; pool: mysql.Pool /** The library's `schema` there: the store's database. */; database: string };

/** The configured effects store's maintenance pool: EFFECTS_DATABASE_URL's MySQL server, else maintenancePool(). */
export function maintenanceTarget(): MaintenanceTarget {
  const mysqlPool = getEffectsMaintenanceMysqlPool();
  return mysqlPool ? { engine: "mysql", ...mysqlPool } : { engine: "postgres", pool: maintenancePool() };
}
