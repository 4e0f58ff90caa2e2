import type pg from "pg";

/**
 * The BullMQ crash test's payment provider: every capture is one more ledger row (no idempotency
 * key on purpose), so a second run of the effect would show as a second row.
 */
export const CAPTURE_LEDGER_DDL = `CREATE TABLE IF NOT EXISTS queue_test_capture_ledger (
  id bigserial PRIMARY KEY,
  tenant_id text NOT NULL,
  order_id text NOT NULL,
  charge_id text NOT NULL,
  amount_cents integer NOT NULL
)`;

export interface Capture {
  tenant: string;
  orderId: string;
  amountCents: number;
}

export async function capture(db: Pick<pg.Pool, "query">, m: Capture): Promise<{ chargeId: string; amountCents: number }> {
  const { rows } = await db.query<{ charge_id: string; amount_cents: number }>(
    `INSERT INTO queue_test_capture_ledger (tenant_id, order_id, charge_id, amount_cents)
     VALUES ($1, $2, 'ch_' || md5(random()::text), $3) RETURNING charge_id, amount_cents`,
    [m.tenant, m.orderId, m.amountCents],
  );
  const row = rows[0] as { charge_id: string; amount_cents: number };
  return { chargeId: row.charge_id, amountCents: row.amount_cents };
}
