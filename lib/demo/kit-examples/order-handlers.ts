/**
 * Handlers for the kit's tests and docs, on the demo's tables (demo_orders, the fake payment
 * provider's ledger, demo_accounting_entries, the fake mailer's outbox): the demo pipeline, which
 * the kit passes, and three classic mistakes, which it flags.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import type { CheckIdempotentOptions, HandlerContext } from "../../idempotency/testing";
import { demoSteps, NO_FAULTS } from "../handlers";
import { FakeMailer, FakePaymentProvider } from "../provider";
import type { OrderMessage } from "../settings";

export function orderMessage(orderId: string, tenant = "acme"): OrderMessage {
  return { tenant, orderId, amountCents: 1299, msgId: `msg-${orderId}`, publishedAt: new Date().toISOString() };
}

/** setup(): the order exists, pending; nothing charged, written or sent for it. */
export function setupOrder(m: OrderMessage) {
  return async (db: pg.Pool) => {
    const args = [m.tenant, m.orderId];
    for (const table of ["demo_provider_ledger", "demo_accounting_entries", "demo_mailer_outbox", "demo_orders"]) {
      await db.query(`DELETE FROM ${table} WHERE tenant_id = $1 AND order_id = $2`, args);
    }
    await db.query("INSERT INTO demo_orders (tenant_id, order_id, amount_cents) VALUES ($1, $2, $3)", [...args, m.amountCents]);
  };
}

/**
 * observe(): what must be the same after one delivery and after many. Generated ids, timestamps,
 * replay counters and message ids are left out; that the order points at the ledger's charge is kept.
 */
export function observeOrder(m: OrderMessage) {
  return async (db: pg.Pool) => {
    const args = [m.tenant, m.orderId];
    const rows = async (sql: string) => (await db.query(sql, args)).rows;
    return {
      order: await rows(
        `SELECT o.status, o.paid_at IS NOT NULL AS paid,
                o.charge_id IS NOT DISTINCT FROM (SELECT l.charge_id FROM demo_provider_ledger l
                  WHERE l.tenant_id = o.tenant_id AND l.order_id = o.order_id AND l.kind = 'capture' ORDER BY l.id LIMIT 1) AS charge_matches_ledger
           FROM demo_orders o WHERE o.tenant_id = $1 AND o.order_id = $2`,
      ),
      captures: await rows(
        "SELECT kind, amount_cents FROM demo_provider_ledger WHERE tenant_id = $1 AND order_id = $2 ORDER BY id",
      ),
      accounting: await rows(
        "SELECT kind, amount_cents FROM demo_accounting_entries WHERE tenant_id = $1 AND order_id = $2 ORDER BY id",
      ),
      receipts: await rows(
        "SELECT recipient, subject FROM demo_mailer_outbox WHERE tenant_id = $1 AND order_id = $2 ORDER BY id",
      ),
    };
  };
}

/** The demo pipeline (order.paid): capture (external) → mark paid (transaction) → receipt (at most once). */
export async function demoPipeline(m: OrderMessage, { db, effects, delivery }: HandlerContext) {
  const steps = demoSteps(db, NO_FAULTS);
  return effects.job({ tenant: m.tenant, jobType: "order.paid", ...delivery }, async (job) => {
    const charge = await steps.capture(job, m);
    await steps.markPaid(job, m, charge.chargeId);
    await steps.receipt(job, m);
    return { chargeId: charge.chargeId };
  });
}

const providerLatency = () => sleep(20);

/** The seed's "obvious build": check the status, then act. Safe twice in a row, not twice at once. */
export async function checkThenAct(m: OrderMessage, { db }: HandlerContext) {
  const { rows } = await db.query("SELECT status FROM demo_orders WHERE tenant_id = $1 AND order_id = $2", [m.tenant, m.orderId]);
  if (rows[0]?.status === "paid") return; // <- every concurrent delivery sees 'pending'
  await providerLatency();
  const charge = await new FakePaymentProvider(db).capture({ tenant: m.tenant, orderId: m.orderId, amountCents: m.amountCents });
  await db.query(
    "UPDATE demo_orders SET status = 'paid', charge_id = $3, paid_at = now() WHERE tenant_id = $1 AND order_id = $2",
    [m.tenant, m.orderId, charge.chargeId],
  );
  await db.query(
    `INSERT INTO demo_accounting_entries (tenant_id, order_id, kind, amount_cents) VALUES ($1, $2, 'capture', $3)
     ON CONFLICT DO NOTHING`,
    [m.tenant, m.orderId, m.amountCents],
  );
  await new FakeMailer(db).send({
    tenant: m.tenant,
    orderId: m.orderId,
    recipient: `billing@${m.tenant}.example`,
    subject: "Receipt",
  });
}

/** Uses the library, but keys every effect on the broker's message id: a re-published message runs again. */
export async function keyedOnMessageId(m: OrderMessage, { db, effects, delivery }: HandlerContext) {
  const provider = new FakePaymentProvider(db);
  await effects.job({ tenant: m.tenant, jobType: "order.paid", ...delivery }, async (job) => {
    const charge = await job.external(`capture:${job.messageId}`, (claim) =>
      provider.capture({ tenant: m.tenant, orderId: m.orderId, amountCents: m.amountCents, idempotencyKey: claim.providerKey }),
    );
    await job.transaction(`mark-paid:${job.messageId}`, (tx) =>
      tx.query(
        "UPDATE demo_orders SET status = 'paid', charge_id = $3, paid_at = now() WHERE tenant_id = $1 AND order_id = $2 AND status = 'pending'",
        [m.tenant, m.orderId, charge.chargeId],
      ),
    );
    await job.atMostOnce(`receipt:${job.messageId}`, () =>
      new FakeMailer(db).send({
        tenant: m.tenant,
        orderId: m.orderId,
        recipient: `billing@${m.tenant}.example`,
        subject: "Receipt",
      }),
    );
  });
}

/** One key for two effects: the receipt is taken for a duplicate of the capture and never sent. */
export async function sharedKey(m: OrderMessage, { db, effects, delivery }: HandlerContext) {
  const input = { tenant: m.tenant, key: `order:${m.orderId}`, jobType: "order.paid", ...delivery };
  const charge = await effects.once(input, (claim) =>
    new FakePaymentProvider(db).capture({
      tenant: m.tenant,
      orderId: m.orderId,
      amountCents: m.amountCents,
      idempotencyKey: claim.providerKey,
    }),
  );
  await db.query(
    "UPDATE demo_orders SET status = 'paid', charge_id = $3, paid_at = now() WHERE tenant_id = $1 AND order_id = $2",
    [m.tenant, m.orderId, charge.outcome?.chargeId],
  );
  await effects.once(input, () =>
    new FakeMailer(db).send({
      tenant: m.tenant,
      orderId: m.orderId,
      recipient: `billing@${m.tenant}.example`,
      subject: "Receipt",
    }),
  );
}

/** The options every example shares: the order's setup and observe, and a re-publish that renames the body's id. */
export function orderCheck(
  databaseUrl: string,
  m: OrderMessage,
  handler: CheckIdempotentOptions<OrderMessage>["handler"],
): CheckIdempotentOptions<OrderMessage> {
  return {
    databaseUrl,
    handler,
    message: m,
    messageId: m.msgId,
    republish: (message, newMessageId) => ({ ...message, msgId: newMessageId }),
    setup: setupOrder(m),
    observe: observeOrder(m),
    concurrency: 5,
  };
}
