import type { Queryable } from "./db-types";

export interface TenantReport {
  tenant: string;
  orders: number;
  captures: number;
  paid: number;
  receipts: number;
  doubleCaptures: number;
  doubleReceipts: number;
  refunds: number;
  doubleRefunds: number;
  providerReplays: number;
  lost: number;
}

export interface DemoReport {
  tenants: TenantReport[];
  totals: TenantReport;
  ok: boolean;
}

// Per tenant, from the shop's orders and the fake provider's and mailer's own records:
// - a double capture is a second capture ledger row for one order (the provider charged twice);
// - a lost order is one older than the grace period that was never captured or never marked paid
//   (a fault swallowed it). Receipts are at-most-once by design: a crash between claim and send
//   may suppress one, so a missing receipt is reported but is not "lost"; two are a bug.
const REPORT_SQL = `
WITH ledger AS (
  SELECT tenant_id, order_id,
         count(*) FILTER (WHERE kind = 'capture') AS captures,
         count(*) FILTER (WHERE kind = 'refund') AS refunds,
         sum(replays) AS replays
    FROM demo_provider_ledger GROUP BY tenant_id, order_id
), mail AS (
  SELECT tenant_id, order_id, count(*) AS receipts FROM demo_mailer_outbox GROUP BY tenant_id, order_id
)
SELECT o.tenant_id AS tenant,
       count(*)::int AS orders,
       coalesce(sum(l.captures), 0)::int AS captures,
       count(*) FILTER (WHERE o.paid_at IS NOT NULL)::int AS paid,
       coalesce(sum(m.receipts), 0)::int AS receipts,
       coalesce(sum(greatest(l.captures - 1, 0)), 0)::int AS double_captures,
       coalesce(sum(greatest(m.receipts - 1, 0)), 0)::int AS double_receipts,
       coalesce(sum(l.refunds), 0)::int AS refunds,
       coalesce(sum(greatest(l.refunds - 1, 0)), 0)::int AS double_refunds,
       coalesce(sum(l.replays), 0)::int AS provider_replays,
       count(*) FILTER (WHERE o.created_at < now() - $1 * interval '1 second'
                          AND (o.paid_at IS NULL OR coalesce(l.captures, 0) = 0))::int AS lost
  FROM demo_orders o
  LEFT JOIN ledger l ON l.tenant_id = o.tenant_id AND l.order_id = o.order_id
  LEFT JOIN mail m ON m.tenant_id = o.tenant_id AND m.order_id = o.order_id
 GROUP BY o.tenant_id
 ORDER BY o.tenant_id`;

/** Checks the demo's invariants: no order charged twice, none lost. `graceSeconds` skips orders still in flight. */
export async function verifyDemo(db: Queryable, options: { graceSeconds?: number } = {}): Promise<DemoReport> {
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
    provider_replays: number;
    lost: number;
  }>(REPORT_SQL, [options.graceSeconds ?? 120]);
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
    providerReplays: r.provider_replays,
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
      providerReplays: 0,
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
      `tenant ${t.tenant.padEnd(8)} orders=${t.orders} captures=${t.captures} paid=${t.paid} receipts=${t.receipts} double_captures=${t.doubleCaptures} double_receipts=${t.doubleReceipts} refunds=${t.refunds} double_refunds=${t.doubleRefunds} provider_replays=${t.providerReplays} lost=${t.lost}`,
  );
  if (report.tenants.length === 0) lines.push("no demo orders yet (start the demo with `npm start`)");
  const t = report.totals;
  lines.push(`demo orders=${t.orders} captures=${t.captures} double_captures=${t.doubleCaptures} lost=${t.lost}`);
  return lines;
}
