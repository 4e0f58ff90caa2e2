/**
 * Handlers for the kit's tests and docs, on the demo's tables (demo_orders, demo_accounting_entries)
 * and the demo's providers (the Stripe-compatible server's PaymentIntents through the `stripe`
 * client, the mailer's messages): the demo pipeline, which the kit passes, and three classic
 * mistakes, which it flags. The providers are served from the test's own process against the
 * test's database (kitProviders), and closed with closeKitProviders().
 */
import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import { onceboardMetadata } from "../../idempotency";
import type { CheckIdempotentOptions, HandlerContext } from "../../idempotency/testing";
import { demoSteps, NO_FAULTS } from "../handlers";
import {
  type DemoProviderServers,
  type DemoProviders,
  demoProviderClients,
  installDemoProviderSchema,
  newDemoApiKey,
  startDemoProviderServers,
} from "../provider";
import type { OrderMessage } from "../settings";
import { postgresShop } from "../shop";
import { PROVIDER_SCHEMA } from "../stripe-storage";

const servers = new Map<string, Promise<DemoProviderServers>>();

/** The demo's providers for the database a handler runs on (one pair of servers per database). */
async function kitProviders(db: pg.Pool): Promise<DemoProviders> {
  const url = db.options.connectionString;
  if (!url) throw new Error("the kit's pool has no connection string to serve the demo's providers from");
  let started = servers.get(url);
  if (!started) {
    started = installDemoProviderSchema(db).then(() => startDemoProviderServers({ databaseUrl: url, apiKey: newDemoApiKey() }));
    servers.set(url, started);
  }
  return demoProviderClients((await started).endpoints);
}

export async function closeKitProviders(): Promise<void> {
  const all = [...servers.values()];
  servers.clear();
  await Promise.all(all.map(async (s) => (await s).close()));
}

const receiptTo = (m: OrderMessage) => `billing+${m.orderId}@${m.tenant}.example`;

export function orderMessage(orderId: string, tenant = "acme"): OrderMessage {
  return { tenant, orderId, amountCents: 1299, msgId: `msg-${orderId}`, publishedAt: new Date().toISOString() };
}

/** setup(): the order exists, pending; nothing charged, written or sent for it. */
function setupOrder(m: OrderMessage) {
  return async (db: pg.Pool) => {
    const args = [m.tenant, m.orderId];
    await kitProviders(db);
    for (const table of ["demo_accounting_entries", "demo_orders"]) {
      await db.query(`DELETE FROM ${table} WHERE tenant_id = $1 AND order_id = $2`, args);
    }
    // The provider's storage is not the shop's to clean, but a test's order starts from nothing there too.
    // (its remembered Idempotency-Keys included: each scenario's effects start anew, and so do their keys).
    await db.query(`DELETE FROM ${PROVIDER_SCHEMA}.objects WHERE metadata->>'order_id' = $1`, [m.orderId]);
    await db.query(`DELETE FROM ${PROVIDER_SCHEMA}.idempotency_keys WHERE response->'metadata'->>'order_id' = $1`, [m.orderId]);
    await db.query(`DELETE FROM ${PROVIDER_SCHEMA}.messages WHERE recipient = $1`, [receiptTo(m)]);
    await db.query("INSERT INTO demo_orders (tenant_id, order_id, amount_cents) VALUES ($1, $2, $3)", [...args, m.amountCents]);
  };
}

/**
 * observe(): what must be the same after one delivery and after many. Generated ids, timestamps,
 * and message ids are left out; that the order points at one of the provider's PaymentIntents is kept.
 */
function observeOrder(m: OrderMessage) {
  return async (db: pg.Pool) => {
    const args = [m.tenant, m.orderId];
    const rows = async (sql: string) => (await db.query(sql, args)).rows;
    return {
      order: await rows(
        `SELECT o.status, o.paid_at IS NOT NULL AS paid,
                o.charge_id IN (SELECT p.id FROM ${PROVIDER_SCHEMA}.objects p
                  WHERE p.kind = 'payment_intent' AND p.metadata->>'order_id' = o.order_id) AS charge_at_provider
           FROM demo_orders o WHERE o.tenant_id = $1 AND o.order_id = $2`,
      ),
      captures: await rows(
        `SELECT 'capture' AS kind, amount::int AS amount_cents FROM ${PROVIDER_SCHEMA}.objects
          WHERE kind = 'payment_intent' AND metadata->>'order_id' = $2 AND $1::text IS NOT NULL ORDER BY created, id`,
      ),
      accounting: await rows(
        "SELECT kind, amount_cents FROM demo_accounting_entries WHERE tenant_id = $1 AND order_id = $2 ORDER BY id",
      ),
      receipts: await (async () =>
        (
          await db.query(`SELECT recipient, subject FROM ${PROVIDER_SCHEMA}.messages WHERE recipient = $1 ORDER BY id`, [
            receiptTo(m),
          ])
        ).rows)(),
    };
  };
}

/** The demo pipeline (order.paid): capture (external) → mark paid (transaction) → receipt (at most once). */
export async function demoPipeline(m: OrderMessage, { db, effects, delivery }: HandlerContext) {
  const steps = demoSteps(postgresShop(db), NO_FAULTS, await kitProviders(db));
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
  const { stripe, mailer } = await kitProviders(db);
  const { rows } = await db.query("SELECT status FROM demo_orders WHERE tenant_id = $1 AND order_id = $2", [m.tenant, m.orderId]);
  if (rows[0]?.status === "paid") return; // <- every concurrent delivery sees 'pending'
  await providerLatency();
  const charge = await stripe.paymentIntents.create({
    amount: m.amountCents,
    currency: "usd",
    metadata: { order_id: m.orderId },
  });
  await db.query(
    "UPDATE demo_orders SET status = 'paid', charge_id = $3, paid_at = now() WHERE tenant_id = $1 AND order_id = $2",
    [m.tenant, m.orderId, charge.id],
  );
  await db.query(
    `INSERT INTO demo_accounting_entries (tenant_id, order_id, kind, amount_cents) VALUES ($1, $2, 'capture', $3)
     ON CONFLICT DO NOTHING`,
    [m.tenant, m.orderId, m.amountCents],
  );
  await mailer.send({ to: receiptTo(m), subject: "Receipt", onceboard_key: `receipt:${m.orderId}`, onceboard_tenant: m.tenant });
}

/** Uses the library, but keys every effect on the broker's message id: a re-published message runs again. */
export async function keyedOnMessageId(m: OrderMessage, { db, effects, delivery }: HandlerContext) {
  const { stripe, mailer } = await kitProviders(db);
  await effects.job({ tenant: m.tenant, jobType: "order.paid", ...delivery }, async (job) => {
    const charge = await job.external(`capture:${job.messageId}`, async (claim) => {
      const intent = await stripe.paymentIntents.create(
        { amount: m.amountCents, currency: "usd", metadata: { ...onceboardMetadata(claim), order_id: m.orderId } },
        { idempotencyKey: claim.providerKey },
      );
      return { chargeId: intent.id };
    });
    await job.transaction(`mark-paid:${job.messageId}`, (tx) =>
      tx.query(
        "UPDATE demo_orders SET status = 'paid', charge_id = $3, paid_at = now() WHERE tenant_id = $1 AND order_id = $2 AND status = 'pending'",
        [m.tenant, m.orderId, charge.chargeId],
      ),
    );
    await job.atMostOnce(`receipt:${job.messageId}`, (claim) =>
      mailer.send({ to: receiptTo(m), subject: "Receipt", ...onceboardMetadata(claim) }),
    );
  });
}

/** One key for two effects: the receipt is taken for a duplicate of the capture and never sent. */
export async function sharedKey(m: OrderMessage, { db, effects, delivery }: HandlerContext) {
  const { stripe, mailer } = await kitProviders(db);
  const input = { tenant: m.tenant, key: `order:${m.orderId}`, jobType: "order.paid", ...delivery };
  const charge = await effects.once(input, async (claim) => {
    const intent = await stripe.paymentIntents.create(
      { amount: m.amountCents, currency: "usd", metadata: { ...onceboardMetadata(claim), order_id: m.orderId } },
      { idempotencyKey: claim.providerKey },
    );
    return { chargeId: intent.id };
  });
  await db.query(
    "UPDATE demo_orders SET status = 'paid', charge_id = $3, paid_at = now() WHERE tenant_id = $1 AND order_id = $2",
    [m.tenant, m.orderId, charge.outcome?.chargeId],
  );
  await effects.once(input, (claim) => mailer.send({ to: receiptTo(m), subject: "Receipt", ...onceboardMetadata(claim) }));
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
