import { Writable } from "node:stream";
import pg from "pg";
import pino, { type Logger } from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe } from "vitest";
import type { EffectsDb } from "../db";
import { createEffects, type EffectsOptions } from "../index";
import { type AppHandle, appRows, appRun, type EngineDatabase, PROVIDER_TABLES } from "./engines";

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function silentLogger(): Logger {
  return pino({ level: "silent" });
}

/** A pino logger whose JSON lines are collected in `lines`. */
export function captureLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split("\n")) if (line.trim()) lines.push(JSON.parse(line));
      cb();
    },
  });
  return { logger: pino({ level: "debug" }, stream), lines };
}

/** Whether testEffects() coalesces (its `coalesce` default); eachCoalescing() sets it per block. */
let coalescing = true;

/**
 * Runs the suite in `body` twice, with coalescing on and off: testEffects() (and `coalesce`, the
 * value to hand to child processes and the test kit) follow the block. Tests in a file run in order,
 * so the mode set by a block's beforeAll holds for that block's tests.
 */
export function eachCoalescing(body: (coalesce: boolean) => void): void {
  describe.each([{ coalesce: true }, { coalesce: false }])("coalescing $coalesce", ({ coalesce }) => {
    beforeAll(() => {
      coalescing = coalesce;
    });
    afterAll(() => {
      coalescing = true;
    });
    body(coalesce);
  });
}

/**
 * An Effects on `db` (a pool, or a test database of either engine: its pool and the library's
 * schema there) with its own registry, a silent logger and no rollup timer.
 */
export function testEffects<Db extends EffectsDb>(db: Db | EngineDatabase, options: Partial<Omit<EffectsOptions, "db">> = {}) {
  const engine = "engine" in db ? db : null;
  return createEffects({
    db: (engine ? engine.pool : db) as Db,
    ...(engine ? { schema: engine.schema } : {}),
    coalesce: coalescing,
    registry: new Registry(),
    logger: silentLogger(),
    rollups: false,
    flushInterval: 0,
    // Tests that set their own retention keep it (registration would replace it with the database's).
    register: false,
    ...options,
  });
}

/** The value of one counter/histogram series in a registry (0 when absent). */
export async function metricValue(
  registry: Registry | undefined,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const metric = registry?.getSingleMetric(name);
  if (!metric) return 0;
  const { values } = await metric.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => String((v.labels as Record<string, unknown>)[k]) === want))
    .filter((v) => !("metricName" in v) || v.metricName === name || v.metricName === `${name}_count`)
    .reduce((sum, v) => sum + v.value, 0);
}

/** Wraps a pool so every statement sent through it is counted (round trips): pg's query, mysql2's query and execute. */
export function countingPool<P extends object>(pool: P): { pool: P; count: () => number; reset: () => void } {
  let n = 0;
  const methods = typeof (pool as { execute?: unknown }).execute === "function" ? ["query", "execute"] : ["query"];
  for (const method of methods) {
    const target = pool as unknown as Record<string, (...args: unknown[]) => unknown>;
    const original = (target[method] as (...args: unknown[]) => unknown).bind(pool);
    target[method] = (...args: unknown[]) => {
      n++;
      return original(...args);
    };
  }
  return { pool, count: () => n, reset: () => (n = 0) };
}

/**
 * A fake payment provider that honours idempotency keys, persisted in the test database so a
 * killed child process and its retry share it. `performed` counts real captures; `requests`
 * counts every call (including deduplicated ones).
 */
export const PROVIDER_DDL = `
CREATE TABLE IF NOT EXISTS fake_provider_charges (idempotency_key text PRIMARY KEY, order_id text NOT NULL, cents int NOT NULL, charge_id text NOT NULL);
CREATE TABLE IF NOT EXISTS fake_provider_requests (id bigserial PRIMARY KEY, idempotency_key text, order_id text NOT NULL);
CREATE TABLE IF NOT EXISTS orders (id text PRIMARY KEY, status text NOT NULL DEFAULT 'pending', paid_count int NOT NULL DEFAULT 0, charge_id text);
CREATE TABLE IF NOT EXISTS sent_mail (id bigserial PRIMARY KEY, order_id text NOT NULL, kind text NOT NULL);
`;

/** The fake provider's and the orders' tables, on the test database's engine. */
export function createProviderTables(db: EngineDatabase): Promise<void> {
  return db.script({ pg: PROVIDER_DDL, mysql: PROVIDER_TABLES.mysql });
}

export async function providerCapture(
  db: AppHandle,
  orderId: string,
  cents: number,
  idempotencyKey: string | null,
): Promise<{ id: string }> {
  await appRun(db, "INSERT INTO fake_provider_requests (idempotency_key, order_id) VALUES ($1, $2)", [idempotencyKey, orderId]);
  const chargeId = `ch_${Math.random().toString(36).slice(2, 10)}`;
  if (idempotencyKey === null) {
    await appRun(
      db,
      {
        pg: "INSERT INTO fake_provider_charges VALUES (gen_random_uuid()::text, $1, $2, $3)",
        mysql: "INSERT INTO fake_provider_charges VALUES (UUID(), $1, $2, $3)",
      },
      [orderId, cents, chargeId],
    );
    return { id: chargeId };
  }
  // The provider's own dedupe: the first request with a key wins; later ones get its result.
  const rows = await appRows<{ charge_id: string }>(
    db,
    {
      pg: `WITH ins AS (INSERT INTO fake_provider_charges VALUES ($1, $2, $3, $4) ON CONFLICT (idempotency_key) DO NOTHING RETURNING charge_id)
     SELECT charge_id FROM ins UNION ALL SELECT charge_id FROM fake_provider_charges WHERE idempotency_key = $1 LIMIT 1`,
      mysql:
        "INSERT INTO fake_provider_charges VALUES ($1, $2, $3, $4) ON DUPLICATE KEY UPDATE idempotency_key = idempotency_key",
    },
    [idempotencyKey, orderId, cents, chargeId],
  );
  if (rows.length > 0) return { id: rows[0]?.charge_id ?? chargeId };
  const found = await appRows<{ charge_id: string }>(
    db,
    "SELECT charge_id FROM fake_provider_charges WHERE idempotency_key = $1",
    [idempotencyKey],
  );
  return { id: found[0]?.charge_id ?? chargeId };
}

export async function capturesFor(db: AppHandle, orderId: string): Promise<number> {
  const rows = await appRows<{ n: number }>(db, "SELECT count(*) AS n FROM fake_provider_charges WHERE order_id = $1", [orderId]);
  return Number(rows[0]?.n ?? 0);
}

export function newPool(url: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on("error", () => {});
  return pool;
}
