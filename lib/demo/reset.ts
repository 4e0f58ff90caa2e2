import type { Queryable } from "./db-types";
import { DEMO_APP_PREFIX, DEMO_BOSS_SCHEMA } from "./settings";

export interface ResetResult {
  effects: number;
  rollupRows: number;
  violationRows: number;
  orders: number;
}

export class DemoRunningError extends Error {
  readonly code = "DEMO_RUNNING";
}

/**
 * Removes exactly the demo's data: effects and rollup rows marked demo, the demo tables and the
 * demo's pg-boss schema. Nothing else is touched. Refuses while demo workers are connected,
 * since they would write again at once. `db` must be a single connection (it runs a transaction).
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
    const effects = await db.query("DELETE FROM effects WHERE demo");
    const rollups = await db.query("DELETE FROM worker_stats_minute WHERE demo");
    const violations = await db.query("DELETE FROM uncaught_violations_minute WHERE demo");
    const orders = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM demo_orders");
    await db.query(
      "TRUNCATE demo_orders, demo_provider_ledger, demo_accounting_entries, demo_mailer_outbox, demo_dead_letters RESTART IDENTITY",
    );
    await db.query(`DROP SCHEMA IF EXISTS ${DEMO_BOSS_SCHEMA} CASCADE`);
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
