import http from "node:http";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import pino from "pino";
import { Registry } from "prom-client";
import { startEmbeddedPostgres } from "../lib/db/embedded";
import { migrateConsole } from "../lib/db/migrate";
import { ensureEffectPartitions } from "../lib/db/partitions";
import { withSearchPath } from "../lib/db/pool";
import { createScratchDatabase } from "../lib/db/scratch";
import {
  createEffects,
  DEFAULT_SCHEMA,
  type EffectsDb,
  type EffectsOptions,
  migrate as migrateLibrary,
} from "../lib/idempotency";
import { distributeForCitus } from "../lib/idempotency/admin";

export interface BenchDatabase {
  /** The plain URL, as a user gives it: for the console and the worker library. */
  url: string;
  /** The server's admin URL (DATABASE_URL, or the embedded server's): for more scratch databases beside it. */
  adminUrl: string;
  /**
   * The URL with the library's schema on the search_path, for the benchmark's own pools: its SQL
   * and the read models it calls name tables unqualified (the console's pools set the same path).
   */
  sqlUrl: string;
  serverVersion: string;
  where: string;
  /** The library's schema there. */
  schema: string;
  close(): Promise<void>;
}

/**
 * A scratch database for a benchmark: on DATABASE_URL's server when set (a throw-away database
 * created beside the given one and dropped afterwards), else an embedded PostgreSQL in a temp dir.
 * Migrated, with effects partitions from yesterday to a week ahead.
 */
export async function benchDatabase(log: (line: string) => void): Promise<BenchDatabase> {
  let adminUrl = process.env.DATABASE_URL;
  let stopServer = async () => {};
  let where = "DATABASE_URL";
  if (!adminUrl) {
    const dataDir = path.join(os.tmpdir(), `onceboard-bench-${process.pid}`);
    log(`starting embedded PostgreSQL in ${dataDir}`);
    const handle = await startEmbeddedPostgres({ dataDir, persistent: false });
    adminUrl = handle.url;
    stopServer = async () => {
      await handle.stop();
    };
    where = "embedded";
  }
  const scratch = await createScratchDatabase(adminUrl, { prefix: "onceboard_bench" });
  const { name, url } = scratch;
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  const serverVersion = (await admin.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]?.v ?? "?";
  await migrateConsole(url);
  const client = new pg.Client(url);
  await client.connect();
  await ensureEffectPartitions(client, { back: 1, ahead: 7 });
  await client.end();
  log(`database ${name} migrated (PostgreSQL ${serverVersion}, ${where})`);
  return {
    url,
    adminUrl,
    sqlUrl: withSearchPath(url, [DEFAULT_SCHEMA]),
    serverVersion,
    where,
    schema: DEFAULT_SCHEMA,
    async close() {
      await admin.end();
      await scratch.drop().catch(() => {});
      await stopServer();
    },
  };
}

/**
 * A scratch schema on a Citus coordinator whose workers are registered (`coordinatorUrl`): the
 * library migrated into it and distributed as `npm run db:migrate -- --citus` does, dropped (with
 * its shards on the workers) afterwards. A schema rather than a database: a database made on the
 * coordinator would need the extension and the workers registered again in it, on every node.
 */
export async function citusBenchDatabase(coordinatorUrl: string, log: (line: string) => void): Promise<BenchDatabase> {
  const schema = `onceboard_bench_${process.pid}`;
  const admin = new pg.Client(coordinatorUrl);
  await admin.connect();
  try {
    const citus = await admin.query<{ v: string; server: string }>(
      "SELECT extversion AS v, current_setting('server_version') AS server FROM pg_catalog.pg_extension WHERE extname = 'citus'",
    );
    const found = citus.rows[0];
    if (!found) throw new Error(`CITUS_URL ${coordinatorUrl}: the citus extension is not installed there`);
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`); // a killed run's leftover
    await migrateLibrary(coordinatorUrl, { schema });
    await distributeForCitus(coordinatorUrl, { schema });
    await ensureEffectPartitions(admin, { back: 1, ahead: 7, schema });
    log(`schema ${schema} migrated and distributed (Citus ${found.v}, PostgreSQL ${found.server}, CITUS_URL)`);
    return {
      url: coordinatorUrl,
      adminUrl: coordinatorUrl,
      sqlUrl: withSearchPath(coordinatorUrl, [schema]),
      serverVersion: `${found.server}, Citus ${found.v}`,
      where: "CITUS_URL",
      schema,
      async close() {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
        await admin.end();
      },
    };
  } catch (error) {
    await admin.end();
    throw error;
  }
}

/** Wraps pool.query so every round trip through the pool is counted. */
export function countRoundTrips(pool: pg.Pool): { count(): number } {
  let n = 0;
  const original = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    n++;
    return original(...args);
  };
  return { count: () => n };
}

/** Runs `op` from `concurrency` loops for `seconds`; returns operations completed and per second. */
export async function runFor(
  concurrency: number,
  seconds: number,
  op: (worker: number, i: number) => Promise<unknown>,
): Promise<{ ops: number; perSecond: number }> {
  const deadline = performance.now() + seconds * 1000;
  let ops = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let i = 0; performance.now() < deadline; i++) {
        await op(worker, i);
        ops++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return { ops, perSecond: ops / elapsed };
}

/** The nearest-rank percentile (`p` in 0–100) of `values`; 0 when there are none. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

export function machine(): string {
  return `${os.cpus().length} cpus, ${os.cpus()[0]?.model ?? "?"}, node ${process.version}`;
}

/**
 * GETs `url` on one kept-alive connection and times it to the last byte of the body. node:http
 * rather than fetch: undici's fetch adds ~0.5 ms at the median and ~1.3 ms at p95 of its own per
 * request on this machine (bench:lookup prints both), which a benchmark of the server should not
 * count. Bodies are not decompressed: no Accept-Encoding is sent.
 */
export function timedGet(
  agent: http.Agent,
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.get(url, { agent, headers }, (response) => {
      response.resume();
      response.on("end", () => resolve({ status: response.statusCode ?? 0, ms: performance.now() - started }));
      response.on("error", reject);
    });
    request.on("error", reject);
  });
}

/**
 * The library as a benchmark measures it: a registry of its own (each instance's metrics apart) and
 * a logger at info that writes nowhere, so the measured path still formats its log lines.
 */
export function benchEffects(pool: EffectsDb, options: Omit<EffectsOptions, "db"> = {}) {
  return createEffects({
    db: pool,
    registry: new Registry(),
    logger: pino({ level: "info" }, pino.destination("/dev/null")),
    ...options,
  });
}
