import pg from "pg";
import { loadConfig } from "../config";

declare global {
  var __onceboardMaintenancePool: pg.Pool | undefined;
}

/**
 * The console's pool for partition maintenance: small, and without the console's
 * statement_timeout (a DETACH … CONCURRENTLY waits for older transactions; each attempt is
 * bounded by lock_timeout instead). Anchored on globalThis like the console pool.
 */
export function maintenancePool(): pg.Pool {
  if (!globalThis.__onceboardMaintenancePool) {
    const config = loadConfig();
    if (!config.DATABASE_URL) throw new Error("DATABASE_URL is not set: partition maintenance needs the database");
    const pool = new pg.Pool({
      connectionString: config.DATABASE_URL,
      max: 3,
      connectionTimeoutMillis: 5000,
      application_name: "onceboard-maintenance",
    });
    pool.on("error", () => {});
    globalThis.__onceboardMaintenancePool = pool;
  }
  return globalThis.__onceboardMaintenancePool;
}
