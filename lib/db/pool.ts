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
 * The connection settings every console pool shares (the console's pool, the maintenance pool,
 * tests' pools): the library's schema first on each connection's search_path, because the
 * console's SQL names tables unqualified, and a statement_timeout when the pool has one. The URL
 * is the one the user gave; nothing here relies on it carrying a search path.
 */
export function consolePoolConfig(options: {
  connectionString: string;
  schema: string;
  /** null: no statement_timeout (maintenance DDL waits on lock_timeout instead). */
  statementTimeoutMs: number | null;
  max: number;
  application_name: string;
  connectionTimeoutMillis?: number;
  idleTimeoutMillis?: number;
}): pg.PoolConfig {
  const { schema, statementTimeoutMs, ...rest } = options;
  const timeout = statementTimeoutMs === null ? "" : `-c statement_timeout=${statementTimeoutMs} `;
  return { ...rest, options: `${timeout}${searchPathOption(schema)}` };
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
    globalThis.__onceboardPool = new pg.Pool(
      consolePoolConfig({
        connectionString: config.DATABASE_URL,
        schema: config.ONCEBOARD_SCHEMA,
        statementTimeoutMs: config.CONSOLE_STATEMENT_TIMEOUT_MS,
        max: 10,
        connectionTimeoutMillis: 5000,
        // pg's default closes a connection idle for 10 s, and the next request then pays a new
        // connection: a login, cold catalog caches (the first plan over ~40 effects partitions took
        // ~80 ms) and its named statements prepared again. Keep them for 5 minutes of quiet instead.
        idleTimeoutMillis: 300_000,
        application_name: "onceboard-console",
      }),
    );
    globalThis.__onceboardPool.on("error", () => {
      // An idle client lost its connection; the pool replaces it. Queries report their own errors.
    });
  }
  return globalThis.__onceboardPool;
}

/**
 * `url` with the schemas put first on the search_path of every connection made from it (libpq's
 * `options` parameter): for the demo's processes, command-line tools and tests' own handlers,
 * which name tables unqualified. Never for the console's pools (consolePoolConfig sets theirs) nor
 * the worker library (it names its schema itself): both are given the URL as a user gives it.
 */
export function withSearchPath(url: string, schemas: string[]): string {
  const parsed = new URL(url);
  const existing = parsed.searchParams.get("options");
  const option = searchPathOption(schemas[0] ?? "onceboard", ...schemas.slice(1));
  parsed.searchParams.set("options", existing ? `${existing} ${option}` : option);
  return parsed.toString();
}
