import type pg from "pg";
import type { Queryable } from "./db-types";
import type { Shop } from "./shop";
import { type ShopTables, withShopTables } from "./shop-copy";
import { PROVIDER_SCHEMA } from "./stripe-storage";

interface TenantReport {
  tenant: string;
  orders: number;
  captures: number;
  paid: number;
  receipts: number;
  doubleCaptures: number;
  doubleReceipts: number;
  refunds: number;
  doubleRefunds: number;
  providerDuplicates: number;
  lost: number;
}

export interface DemoReport {
  tenants: TenantReport[];
  totals: TenantReport;
  ok: boolean;
}

// Per tenant, from the shop's orders and the demo provider's and mailer's own storage (the objects
// and messages carry the effect key in metadata.onceboard_key, as any reconciliation joins them):
// - a double capture is a second PaymentIntent for one order's capture key that the provider did
//   not plant itself (its planted duplicates are the reconciliation's to find, not the shop's bug);
// - a lost order is one older than the grace period that was never marked paid, or has no
//   PaymentIntent though the provider planted no loss for it (a fault swallowed it). Receipts are
//   at-most-once by design: a crash between claim and send may suppress one, so a missing receipt
//   is reported but is not "lost"; two are a bug.
// provider_duplicates: the duplicates the provider planted, which the reconciliation must find (demo:verify).
// The shop's orders are read from `t.orders` (shop-copy.ts: the table, or a copy of MariaDB's).
const reportSql = (t: ShopTables) => `
WITH objects AS (
  SELECT metadata->>'onceboard_tenant' AS tenant_id,
         substr(metadata->>'onceboard_key', strpos(metadata->>'onceboard_key', ':') + 1) AS order_id,
         count(*) FILTER (WHERE kind = 'payment_intent') AS captures,
         count(*) FILTER (WHERE kind = 'refund') AS refunds
    FROM ${PROVIDER_SCHEMA}.objects WHERE metadata ? 'onceboard_key' GROUP BY 1, 2
), planted AS (
  SELECT onceboard_tenant AS tenant_id, substr(onceboard_key, strpos(onceboard_key, ':') + 1) AS order_id,
         count(*) FILTER (WHERE disagreement = 'duplicate' AND onceboard_key LIKE 'capture:%') AS capture_duplicates,
         count(*) FILTER (WHERE disagreement = 'duplicate' AND onceboard_key LIKE 'refund:%') AS refund_duplicates,
         bool_or(disagreement IN ('lost', 'keyless') AND onceboard_key LIKE 'capture:%') AS capture_unseen
    FROM ${PROVIDER_SCHEMA}.injections WHERE onceboard_key IS NOT NULL GROUP BY 1, 2
), mail AS (
  SELECT onceboard_tenant AS tenant_id, substr(onceboard_key, length('receipt:') + 1) AS order_id, count(*) AS receipts
    FROM ${PROVIDER_SCHEMA}.messages WHERE onceboard_key LIKE 'receipt:%' GROUP BY 1, 2
)
SELECT o.tenant_id AS tenant,
       count(*)::int AS orders,
       coalesce(sum(l.captures), 0)::int AS captures,
       count(*) FILTER (WHERE o.paid_at IS NOT NULL)::int AS paid,
       coalesce(sum(m.receipts), 0)::int AS receipts,
       coalesce(sum(greatest(l.captures - coalesce(p.capture_duplicates, 0) - 1, 0)), 0)::int AS double_captures,
       coalesce(sum(greatest(m.receipts - 1, 0)), 0)::int AS double_receipts,
       coalesce(sum(l.refunds), 0)::int AS refunds,
       coalesce(sum(greatest(l.refunds - coalesce(p.refund_duplicates, 0) - 1, 0)), 0)::int AS double_refunds,
       coalesce(sum(p.capture_duplicates + p.refund_duplicates), 0)::int AS provider_duplicates,
       count(*) FILTER (WHERE o.created_at < now() - $1 * interval '1 second'
                          AND (o.paid_at IS NULL OR (coalesce(l.captures, 0) = 0 AND NOT coalesce(p.capture_unseen, false))))::int AS lost
  FROM ${t.orders} o
  LEFT JOIN objects l ON l.tenant_id = o.tenant_id AND l.order_id = o.order_id
  LEFT JOIN planted p ON p.tenant_id = o.tenant_id AND p.order_id = o.order_id
  LEFT JOIN mail m ON m.tenant_id = o.tenant_id AND m.order_id = o.order_id
 GROUP BY o.tenant_id
 ORDER BY o.tenant_id`;

/**
 * Checks the demo's invariants: no order charged twice, none lost. `graceSeconds` skips orders
 * still in flight. `shop`: where the shop's tables are (default: `db`'s, PostgreSQL).
 */
export async function verifyDemo(
  db: Queryable | pg.Pool,
  options: { graceSeconds?: number; shop?: Shop } = {},
): Promise<DemoReport> {
  return withShopTables(db, options.shop, (session, tables) => demoReport(session, tables, options.graceSeconds ?? 120));
}

/** verifyDemo's report on a session that reads the shop at `tables`. */
export async function demoReport(db: Queryable, tables: ShopTables, graceSeconds: number): Promise<DemoReport> {
  const { rows } = await db.query<{
    tenant: string;
    orders: number;
    captures: number;
    paid: number;
    receipts: number;
    double_captures: number;
    double_receipts: number;
    refunds: number;
    double_refunds: number;
    provider_duplicates: number;
    lost: number;
  }>(reportSql(tables), [graceSeconds]);
  const tenants: TenantReport[] = rows.map((r) => ({
    tenant: r.tenant,
    orders: r.orders,
    captures: r.captures,
    paid: r.paid,
    receipts: r.receipts,
    doubleCaptures: r.double_captures,
    doubleReceipts: r.double_receipts,
    refunds: r.refunds,
    doubleRefunds: r.double_refunds,
    providerDuplicates: r.provider_duplicates,
    lost: r.lost,
  }));
  const totals = tenants.reduce<TenantReport>(
    (sum, t) => {
      for (const k of Object.keys(sum) as (keyof TenantReport)[]) if (k !== "tenant") (sum[k] as number) += t[k] as number;
      return sum;
    },
    {
      tenant: "all",
      orders: 0,
      captures: 0,
      paid: 0,
      receipts: 0,
      doubleCaptures: 0,
      doubleReceipts: 0,
      refunds: 0,
      doubleRefunds: 0,
      providerDuplicates: 0,
      lost: 0,
    },
  );
  const ok = totals.doubleCaptures === 0 && totals.lost === 0 && totals.doubleReceipts === 0 && totals.doubleRefunds === 0;
  return { tenants, totals, ok };
}

/** The lines demo:verify prints; the last is the machine-readable summary. */
export function formatReport(report: DemoReport): string[] {
  const lines = report.tenants.map(
    (t) =>
      `tenant ${t.tenant.padEnd(8)} orders=${t.orders} captures=${t.captures} paid=${t.paid} receipts=${t.receipts} double_captures=${t.doubleCaptures} double_receipts=${t.doubleReceipts} refunds=${t.refunds} double_refunds=${t.doubleRefunds} provider_duplicates=${t.providerDuplicates} lost=${t.lost}`,
  );
  if (report.tenants.length === 0) lines.push("no demo orders yet (start the demo with `npm start`)");
  const t = report.totals;
  lines.push(`demo orders=${t.orders} captures=${t.captures} double_captures=${t.doubleCaptures} lost=${t.lost}`);
  return lines;
}
