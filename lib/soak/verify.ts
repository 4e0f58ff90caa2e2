import type pg from "pg";
import type { Queryable } from "../db/types";
import type { Shop, ShopStatement } from "../demo/shop";
import { type ShopTables, withShopTables } from "../demo/shop-copy";
import { PROVIDER_SCHEMA } from "../demo/stripe-storage";
import { demoReport } from "../demo/verify";

/** The constraint the injected bug collides with (lib/demo's mark-paid writing its entry twice). */
export const INJECTED_CONSTRAINT = "demo_accounting_entries_entry_key";

export interface SoakVerification {
  orders: number;
  captures: number;
  paid: number;
  receipts: number;
  doubleCaptures: number;
  doubleReceipts: number;
  /** Orders with more than one accounting entry (mark-paid applied twice). */
  doubleEntries: number;
  /** Orders never captured or never marked paid. */
  unpaid: number;
  /** Orders without an accounting entry (mark-paid's writes missing). */
  missingEntries: number;
  /** Paid orders whose charge id is not the provider's charge for that order. */
  chargeMismatches: number;
  missingReceipts: number;
  /** receipt:* effects marked abandoned (the at-most-once step skipped after a crash). */
  abandonedReceipts: number;
  /** Abandoned receipts whose email had gone out before the crash (the crash hit after the send). */
  abandonedAfterSend: number;
  /** Orders with no receipt and no abandoned receipt step: lost, not explained by at-most-once. */
  unexplainedMissingReceipts: number;
  /** Effects still in progress or failed once everything was acked. */
  stuckEffects: number;
  /** Published deliveries (not in-flight copies) that pg-boss completed / failed for good. */
  brokerCompleted: number;
  brokerFailed: number;
  /** Uncaught unique violations counted by the workers' per-minute rollups, by constraint. */
  rolledUpViolations: Record<string, number>;
  /** Violation rows (uncaught_violation_keys), by `<tenant>\u0001<effect key>`. */
  recordedViolationKeys: Record<string, number>;
  /** What the library's batched bookkeeping recorded: the rollups' suppressed, sum(effects.duplicate_count). */
  recordedSuppressions: number;
  recordedDuplicateCounts: number;
  doubleEffects: number;
  lost: number;
}

// Per order, what the pipeline left behind: the accounting entries (mark-paid), the receipt's
// effect status and email count, and whether the stored charge is the provider's. The shop's
// tables are `t`'s (lib/demo/shop-copy.ts: the tables, or copies of MariaDB's).
const detailSql = (t: ShopTables) => `
WITH entries AS (
  SELECT tenant_id, order_id, count(*) AS n FROM ${t.entries} GROUP BY tenant_id, order_id
), mail AS (
  SELECT onceboard_tenant AS tenant_id, substr(onceboard_key, length('receipt:') + 1) AS order_id, count(*) AS n
    FROM ${PROVIDER_SCHEMA}.messages WHERE onceboard_key LIKE 'receipt:%' GROUP BY 1, 2
), receipt AS (
  SELECT tenant_id, substr(key, length('receipt:') + 1) AS order_id, status
    FROM ${t.effects} WHERE key LIKE 'receipt:%'
), charge AS (
  SELECT metadata->>'onceboard_tenant' AS tenant_id, substr(metadata->>'onceboard_key', length('capture:') + 1) AS order_id,
         min(id) AS charge_id
    FROM ${PROVIDER_SCHEMA}.objects WHERE kind = 'payment_intent' AND metadata->>'onceboard_key' LIKE 'capture:%' GROUP BY 1, 2
)
SELECT
  count(*) FILTER (WHERE coalesce(e.n, 0) > 1)::int AS double_entries,
  count(*) FILTER (WHERE coalesce(e.n, 0) = 0)::int AS missing_entries,
  count(*) FILTER (WHERE o.paid_at IS NOT NULL AND o.charge_id IS DISTINCT FROM c.charge_id)::int AS charge_mismatches,
  count(*) FILTER (WHERE coalesce(m.n, 0) = 0)::int AS missing_receipts,
  count(*) FILTER (WHERE r.status = 'abandoned')::int AS abandoned_receipts,
  count(*) FILTER (WHERE r.status = 'abandoned' AND coalesce(m.n, 0) > 0)::int AS abandoned_after_send,
  count(*) FILTER (WHERE coalesce(m.n, 0) = 0 AND r.status IS DISTINCT FROM 'abandoned')::int AS unexplained_missing
FROM ${t.orders} o
LEFT JOIN entries e USING (tenant_id, order_id)
LEFT JOIN mail m USING (tenant_id, order_id)
LEFT JOIN receipt r USING (tenant_id, order_id)
LEFT JOIN charge c USING (tenant_id, order_id)`;

/** The library's tables the verdict reads, on either store. */
const STUCK_EFFECTS: ShopStatement = {
  pg: "SELECT count(*)::int AS n FROM effects WHERE status IN ('in_progress', 'failed')",
  mysql: "SELECT count(*) AS n FROM effects WHERE status IN ('in_progress', 'failed')",
};
const ROLLED_UP_VIOLATIONS: ShopStatement = {
  pg: "SELECT constraint_name, sum(count)::int AS n FROM uncaught_violations_minute GROUP BY constraint_name",
  mysql: "SELECT constraint_name, sum(count) AS n FROM uncaught_violations_minute GROUP BY constraint_name",
};
const RECORDED_VIOLATIONS: ShopStatement = {
  pg: `SELECT tenant_id || chr(1) || key AS id, count(*)::int AS n FROM uncaught_violation_keys
        WHERE constraint_name = $1 GROUP BY tenant_id, key`,
  // CHAR(1 USING …): a bare CHAR(1) is a binary string, and so would be the whole id.
  mysql: `SELECT CONCAT(tenant_id, CHAR(1 USING utf8mb4), \`key\`) AS id, count(*) AS n FROM uncaught_violation_keys
           WHERE constraint_name = $1 GROUP BY tenant_id, \`key\``,
};
const BOOKKEEPING: ShopStatement = {
  pg: `SELECT (SELECT coalesce(sum(suppressed), 0)::int FROM worker_stats_minute) AS suppressed,
              (SELECT coalesce(sum(duplicate_count), 0)::int FROM effects) AS duplicate_counts`,
  mysql: `SELECT (SELECT coalesce(sum(suppressed), 0) FROM worker_stats_minute) AS suppressed,
                 (SELECT coalesce(sum(duplicate_count), 0) FROM effects) AS duplicate_counts`,
};

/**
 * The soak's verdict, from the shop's, the provider's and the mailer's own records (lib/demo's
 * demo:verify query for captures, double captures and unpaid orders, plus the receipt and
 * accounting checks). double_effects: an effect applied twice (capture, receipt, accounting
 * entry). lost: an order never captured or paid, never booked, or missing its receipt without
 * an abandoned at-most-once step to explain it.
 */
export async function verifySoak(
  db: Queryable | pg.Pool,
  /** What the broker says of the published deliveries (lib/soak/brokers.ts, settled()). */
  broker: { completed: number; failed: number },
  /** Where the shop's tables and the effects are: `db`'s PostgreSQL, or MariaDB (--store mariadb). */
  shop: Shop,
): Promise<SoakVerification> {
  const { demo, d } = await withShopTables(db, shop, async (session, tables) => {
    const demo = await demoReport(session, tables, 0);
    const { rows } = await session.query<{
      double_entries: number;
      missing_entries: number;
      charge_mismatches: number;
      missing_receipts: number;
      abandoned_receipts: number;
      abandoned_after_send: number;
      unexplained_missing: number;
    }>(detailSql(tables));
    return { demo, d: rows[0]! };
  });
  const t = demo.totals;
  // The library's own tables, read where they are (the effects store).
  const [stuck] = await shop.rows<{ n: number }>(STUCK_EFFECTS);
  const violations = await shop.rows<{ constraint_name: string; n: number }>(ROLLED_UP_VIOLATIONS);
  const recorded = await shop.rows<{ id: string; n: number }>(RECORDED_VIOLATIONS, [INJECTED_CONSTRAINT]);
  const [bookkeeping] = await shop.rows<{ suppressed: number; duplicate_counts: number }>(BOOKKEEPING);
  const doubleEffects = t.doubleCaptures + t.doubleReceipts + t.doubleRefunds + d.double_entries;
  const lost = t.lost + d.missing_entries + d.unexplained_missing;
  return {
    orders: t.orders,
    captures: t.captures,
    paid: t.paid,
    receipts: t.receipts,
    doubleCaptures: t.doubleCaptures,
    doubleReceipts: t.doubleReceipts,
    doubleEntries: d.double_entries,
    unpaid: t.lost,
    missingEntries: d.missing_entries,
    chargeMismatches: d.charge_mismatches,
    missingReceipts: d.missing_receipts,
    abandonedReceipts: d.abandoned_receipts,
    abandonedAfterSend: d.abandoned_after_send,
    unexplainedMissingReceipts: d.unexplained_missing,
    stuckEffects: Number(stuck?.n ?? 0),
    brokerCompleted: broker.completed,
    brokerFailed: broker.failed,
    rolledUpViolations: Object.fromEntries(violations.map((r) => [r.constraint_name, Number(r.n)])),
    recordedViolationKeys: Object.fromEntries(recorded.map((r) => [r.id, Number(r.n)])),
    recordedSuppressions: Number(bookkeeping?.suppressed ?? 0),
    recordedDuplicateCounts: Number(bookkeeping?.duplicate_counts ?? 0),
    doubleEffects,
    lost,
  };
}

/**
 * Violations that came back to a handler (the ground truth, by tenant and key) without their row
 * in uncaught_violation_keys: a worker SIGKILLed right after one must have lost none.
 */
export function violationsLost(seen: Record<string, number>, recorded: Record<string, number>): number {
  let lost = 0;
  for (const [id, n] of Object.entries(seen)) lost += Math.max(0, n - (recorded[id] ?? 0));
  return lost;
}
