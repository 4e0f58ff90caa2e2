import type { Queryable } from "./db-types";
import { DEMO_SCHEMA } from "./schema";
import { DEMO_APP_PREFIX, DEMO_BOSS_SCHEMA } from "./settings";
import { PROVIDER_SCHEMA } from "./stripe-storage";

interface ResetResult {
  effects: number;
  rollupRows: number;
  violationRows: number;
  orders: number;
}

export class DemoRunningError extends Error {
  readonly code = "DEMO_RUNNING";
}

/**
 * Removes exactly the demo's data: the marked effects and rollup rows (its workers run marked), the demo's own schema
 * (its tables) and the demo's pg-boss schema. Nothing else is touched. Refuses while demo workers are connected,
 * since they would write again at once. `db` must be a single connection (it runs a transaction).
 * demo is part of every rollup table's key (a demo count never shares a row with a real one), and
 * the triggers that keep the ten-minute, hourly and daily sums subtract deleted rows, so every
 * level the console reads loses exactly the demo's counts (lib/demo/demo-data.test.ts).
 */
export async function resetDemo(db: Queryable): Promise<ResetResult> {
  const running = await db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE $1",
    [`${DEMO_APP_PREFIX}%`],
  );
  if ((running.rows[0]?.n ?? 0) > 0) {
    throw new DemoRunningError(
      `the demo is running (${running.rows[0]?.n} demo connections): stop \`npm start\` first, or restart it with --no-demo`,
    );
  }
  await db.query("BEGIN");
  try {
    const effects = await db.query("DELETE FROM effects WHERE marked");
    const rollups = await db.query("DELETE FROM worker_stats_minute WHERE marked");
    const violations = await db.query("DELETE FROM uncaught_violations_minute WHERE marked");
    await db.query("DELETE FROM claim_latency_minute WHERE marked");
    await db.query("DELETE FROM tenant_suppressions_hour WHERE marked");
    await db.query("DELETE FROM tenant_violations_hour WHERE marked");
    await db.query("DELETE FROM uncaught_violation_keys WHERE marked");
    const orders = await db.query<{ n: number }>(
      `SELECT CASE WHEN to_regclass('${DEMO_SCHEMA}.demo_orders') IS NULL THEN 0
                   ELSE (xpath('/row/n/text()', query_to_xml('SELECT count(*) AS n FROM ${DEMO_SCHEMA}.demo_orders', false, true, '')))[1]::text::int
              END AS n`,
    );
    // The demo's tables live in their own schema: it goes whole (the demo makes it again at start).
    await db.query(`DROP SCHEMA IF EXISTS ${DEMO_SCHEMA} CASCADE`);
    await db.query(`DROP SCHEMA IF EXISTS ${DEMO_BOSS_SCHEMA} CASCADE`);
    // The demo's provider (its PaymentIntents, refunds, messages and what it planted) goes with it.
    await db.query(`DROP SCHEMA IF EXISTS ${PROVIDER_SCHEMA} CASCADE`);
    await db.query("COMMIT");
    return {
      effects: effects.rowCount ?? 0,
      rollupRows: rollups.rowCount ?? 0,
      violationRows: violations.rowCount ?? 0,
      orders: orders.rows[0]?.n ?? 0,
    };
  } catch (error) {
    await db.query("ROLLBACK").catch(() => {});
    throw error;
  }
}
