import pg from "pg";
import { loadConfig } from "../config";

// pg returns bigint (int8) as strings by default; our counters stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

declare global {
  var __onceboardPool: pg.Pool | undefined;
}

/**
 * The console's one pg pool per process. Anchored on globalThis because Next.js loads route
 * handlers and instrumentation as separate module copies. Console queries carry a
 * statement_timeout so one slow query cannot hang an incident dashboard.
 */
export function getPool(): pg.Pool {
  if (!globalThis.__onceboardPool) {
    const config = loadConfig();
    if (!config.DATABASE_URL) {
      throw new Error("DATABASE_URL is not set: start the console with `npm start`, which provides one");
    }
    globalThis.__onceboardPool = new pg.Pool({
      connectionString: config.DATABASE_URL,
      max: 10,
      connectionTimeoutMillis: 5000,
      application_name: "onceboard-console",
      options: `-c statement_timeout=${config.CONSOLE_STATEMENT_TIMEOUT_MS}`,
    });
    globalThis.__onceboardPool.on("error", () => {
      // An idle client lost its connection; the pool replaces it. Queries report their own errors.
    });
  }
  return globalThis.__onceboardPool;
}
