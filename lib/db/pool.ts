import pg from "pg";
import { loadConfig } from "../config";

// pg returns bigint (int8) as strings by default; our counters stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

declare global {
  var __onceboardPool: pg.Pool | undefined;
}

/** A libpq `options` fragment that puts the library's schema first on the search_path. */
export function searchPathOption(schema: string, ...more: string[]): string {
  return `-c search_path=${[schema, ...more, "public"].join(",")}`;
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
      // pg's default closes a connection idle for 10 s, and the next request then pays a new
      // connection: a login, cold catalog caches (the first plan over ~40 effects partitions took
      // ~80 ms) and its named statements prepared again. Keep them for 5 minutes of quiet instead.
      idleTimeoutMillis: 300_000,
      application_name: "onceboard-console",
      // The console's SQL names tables unqualified: they resolve in the library's schema.
      options: `-c statement_timeout=${config.CONSOLE_STATEMENT_TIMEOUT_MS} ${searchPathOption(config.ONCEBOARD_SCHEMA)}`,
    });
    globalThis.__onceboardPool.on("error", () => {
      // An idle client lost its connection; the pool replaces it. Queries report their own errors.
    });
  }
  return globalThis.__onceboardPool;
}

/**
 * `url` with the schemas put first on the search_path of every connection made from it (libpq's
 * `options` parameter): for code that names tables unqualified — the console's read models, the
 * demo, tests and benchmarks. The worker library never needs it: it names its schema itself.
 */
export function withSearchPath(url: string, schemas: string[]): string {
  const parsed = new URL(url);
  const existing = parsed.searchParams.get("options");
  const option = searchPathOption(schemas[0] ?? "onceboard", ...schemas.slice(1));
  parsed.searchParams.set("options", existing ? `${existing} ${option}` : option);
  return parsed.toString();
}
