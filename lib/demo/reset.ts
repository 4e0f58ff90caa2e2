import type { Queryable } from "./db-types";
import { DEMO_SCHEMA } from "./schema";
import { DEMO_APP_PREFIX, DEMO_BOSS_SCHEMA } from "./settings";
import { mariadbOnly, type Shop, shopTablesPresent } from "./shop";
import { PROVIDER_SCHEMA } from "./stripe-storage";

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
 * Removes exactly the demo's data: the marked effects and rollup rows (its workers run marked), the demo's own schema
 * (its tables) and the demo's pg-boss schema. Nothing else is touched. Refuses while demo workers are connected,
 * since they would write again at once. `db` must be a single connection (it runs a transaction).
 * demo is part of every rollup table's key (a demo count never shares a row with a real one), and
 * the triggers that keep the ten-minute, hourly, six-hour and daily sums subtract deleted rows, so
 * every level the console reads loses exactly the demo's counts (lib/demo/demo-data.test.ts).
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

/** The library's tables on MariaDB whose `marked` rows are the demo's (the MySQL store keeps no trigger-made levels: the hours go too). */
const MARIADB_MARKED_TABLES = [
  "effects",
  "delivery_timeline",
  "uncaught_violation_keys",
  "worker_stats_minute",
  "worker_stats_hour",
  "claim_latency_minute",
  "claim_latency_hour",
  "uncaught_violations_minute",
  "tenant_suppressions_hour",
  "tenant_violations_hour",
] as const;

/**
 * demo:reset for the demo on MariaDB (`npm start -- --store mariadb`): the marked rows of the
 * library's tables and the shop's tables in the demo's MariaDB database (the PostgreSQL side is
 * resetDemo's). Refuses while any other session uses that database: MariaDB does not say which
 * program a session is, so the demo's workers and a console reading the store are alike here.
 */
export async function resetMariadbDemo(shop: Shop): Promise<ResetResult> {
  const [others] = await shop.rows<{ n: number }>(
    mariadbOnly("SELECT count(*) AS n FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID()"),
  );
  const n = Number(others?.n ?? 0);
  if (n > 0) {
    throw new DemoRunningError(
      `${n} other session${n === 1 ? " uses" : "s use"} ${shop.describe} (the demo's workers, or a console reading it): stop \`npm start\` first`,
    );
  }
  const deleted: Record<string, number> = {};
  for (const table of MARIADB_MARKED_TABLES) {
    deleted[table] = await shop.run(mariadbOnly(`DELETE FROM ${table} WHERE marked`));
  }
  const [orders] = (await shopTablesPresent(shop))
    ? await shop.rows<{ n: number }>(mariadbOnly("SELECT count(*) AS n FROM demo_orders"))
    : [];
  await shop.run(mariadbOnly("DROP TABLE IF EXISTS demo_unsent_receipts, demo_accounting_entries, demo_orders"));
  return {
    effects: deleted.effects ?? 0,
    rollupRows: deleted.worker_stats_minute ?? 0,
    violationRows: deleted.uncaught_violations_minute ?? 0,
    orders: Number(orders?.n ?? 0),
  };
}
