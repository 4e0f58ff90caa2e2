import { randomUUID } from "node:crypto";
import type { Queryable } from "./db-types";

export interface Charge {
  chargeId: string;
  amountCents: number;
  /** True when the provider recognised the idempotency key and returned the original charge. */
  replayed: boolean;
}

/**
 * A fake payment provider that honours idempotency keys the way real ones do: the first request
 * with a key performs the charge; any later request with the same key returns the original
 * charge and performs nothing. One statement, so two concurrent requests with one key cannot
 * both charge (the unique index on idempotency_key serialises them).
 */
// Why DO UPDATE rather than DO NOTHING: DO NOTHING returns no row for the replay, and reading the
// original afterwards would be a second statement. The no-op update returns the stored charge and
// counts the replay; xmax = 0 only on a freshly inserted row.
const CAPTURE_SQL = `
INSERT INTO demo_provider_ledger AS l (tenant_id, order_id, kind, idempotency_key, charge_id, amount_cents)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (idempotency_key) DO UPDATE
   SET replays = l.replays + 1, last_replay_at = now()
RETURNING l.charge_id, l.amount_cents, (l.xmax <> 0) AS replayed`;

export class FakePaymentProvider {
  constructor(private readonly db: Queryable) {}

  /** Captures a payment. Without an idempotency key every call charges again, as real APIs do. */
  async capture(input: { tenant: string; orderId: string; amountCents: number; idempotencyKey?: string }): Promise<Charge> {
    return this.request("capture", input);
  }

  async refund(input: { tenant: string; orderId: string; amountCents: number; idempotencyKey?: string }): Promise<Charge> {
    return this.request("refund", input);
  }

  private async request(
    kind: "capture" | "refund",
    input: { tenant: string; orderId: string; amountCents: number; idempotencyKey?: string },
  ): Promise<Charge> {
    const chargeId = `${kind === "capture" ? "ch" : "re"}_${randomUUID().replaceAll("-", "").slice(0, 20)}`;
    const key = input.idempotencyKey ?? `none:${chargeId}`;
    const { rows } = await this.db.query<{ charge_id: string; amount_cents: number; replayed: boolean }>(CAPTURE_SQL, [
      input.tenant,
      input.orderId,
      kind,
      key,
      chargeId,
      input.amountCents,
    ]);
    const row = rows[0]!;
    return { chargeId: row.charge_id, amountCents: row.amount_cents, replayed: row.replayed };
  }
}

/** A fake mailer that does NOT dedupe: every call is one more email in the outbox. */
export class FakeMailer {
  constructor(private readonly db: Queryable) {}

  async send(input: { tenant: string; orderId: string; recipient: string; subject: string; messageId?: string }): Promise<{
    emailId: number;
  }> {
    const { rows } = await this.db.query<{ id: number }>(
      `INSERT INTO demo_mailer_outbox (tenant_id, order_id, recipient, subject, message_id)
       VALUES ($1, $2, $3, $4, $5) RETURNING id`,
      [input.tenant, input.orderId, input.recipient, input.subject, input.messageId ?? null],
    );
    return { emailId: rows[0]!.id };
  }
}
