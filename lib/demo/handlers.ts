import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import type PgBoss from "pg-boss";
import { type JobContext, onceboardMetadata, providerOutcome } from "../idempotency";
import type { IdempotentHandler } from "../queues";
import type { DemoProviders } from "./provider";
import { type DemoJobType, type DemoSettings, JOB_TYPES, type OrderMessage } from "./settings";
import type { Shop, ShopStatement } from "./shop";

/** The faults a worker injects, each drawn per opportunity at its configured rate. */
export interface Faults {
  /** The worker process dies right here (SIGKILL: no cleanup, no ack). */
  crash(where: string): void;
  /** Sleeps past the effect's lease and the broker's expiry when the slow fault is drawn. */
  maybeSlow(where: string): Promise<void>;
  /** Whether mark-paid should write its accounting entry twice (uncaught unique violation). */
  violation(): boolean;
  /**
   * The worker dies after claiming the receipt and before sending it: the email the at-most-once
   * trade gives up. `record` runs first (the demo notes the key, demo:verify's ground truth for the
   * mailer's reconciliation). Absent: never.
   */
  crashBeforeSend?(where: string, record: () => Promise<void>): Promise<void>;
}

/** The line a demo worker logs just before its crash fault SIGKILLs it (the supervisor looks for it). */
export const crashFaultLine = (pid: number): string => `fault: worker ${pid} exits mid-job`;

export function createFaults(settings: DemoSettings, random = Math.random, log: (line: string) => void = () => {}): Faults {
  return {
    crash(where) {
      if (random() < settings.crash) {
        log(`${crashFaultLine(process.pid)} (${where})`);
        process.kill(process.pid, "SIGKILL");
      }
    },
    async maybeSlow(where) {
      if (random() < settings.slow) {
        log(`fault: slow handler (${where}) sleeps ${settings.slowMs} ms, past its lease and the broker's expiry`);
        await sleep(settings.slowMs);
      }
    },
    violation: () => random() < settings.violation,
    async crashBeforeSend(where, record) {
      // Half the receipt's crash opportunities fall before the send, half after it (capture's stays whole).
      if (random() < settings.crash / 2) {
        await record();
        log(`${crashFaultLine(process.pid)} (${where})`);
        process.kill(process.pid, "SIGKILL");
      }
    },
  };
}

export const NO_FAULTS: Faults = { crash() {}, maybeSlow: async () => {}, violation: () => false };

type Job = JobContext<pg.PoolClient>;

/** The shop's statements of the order pipeline, on either store (lib/demo/shop.ts). */
const MARK_PAID: ShopStatement = {
  pg: `UPDATE demo_orders SET status = 'paid', charge_id = $3, paid_at = now()
        WHERE tenant_id = $1 AND order_id = $2 AND status = 'pending'`,
  mysql: `UPDATE demo_orders SET status = 'paid', charge_id = $3, paid_at = UTC_TIMESTAMP(3)
           WHERE tenant_id = $1 AND order_id = $2 AND status = 'pending'`,
};
const ACCOUNTING_ENTRY: ShopStatement = {
  pg: "INSERT INTO demo_accounting_entries (tenant_id, order_id, kind, amount_cents) VALUES ($1, $2, 'capture', $3)",
  mysql: "INSERT INTO demo_accounting_entries (tenant_id, order_id, kind, amount_cents) VALUES ($1, $2, 'capture', $3)",
};
const UNSENT_RECEIPT: ShopStatement = {
  pg: "INSERT INTO demo_unsent_receipts (tenant_id, effect_key) VALUES ($1, $2) ON CONFLICT DO NOTHING",
  // Not INSERT IGNORE: that would turn every error into a warning, not only the duplicate.
  mysql: "INSERT INTO demo_unsent_receipts (tenant_id, effect_key) VALUES ($1, $2) ON DUPLICATE KEY UPDATE tenant_id = tenant_id",
};
const PAID_CHARGE: ShopStatement = {
  pg: "SELECT charge_id FROM demo_orders WHERE tenant_id = $1 AND order_id = $2 AND paid_at IS NOT NULL",
  mysql: "SELECT charge_id FROM demo_orders WHERE tenant_id = $1 AND order_id = $2 AND paid_at IS NOT NULL",
};
const MARK_REFUNDED: ShopStatement = {
  pg: "UPDATE demo_orders SET status = 'refunded' WHERE tenant_id = $1 AND order_id = $2 AND status = 'paid'",
  mysql: "UPDATE demo_orders SET status = 'refunded' WHERE tenant_id = $1 AND order_id = $2 AND status = 'paid'",
};

export interface DemoSteps {
  capture(job: Job, m: OrderMessage): Promise<{ chargeId: string; amountCents: number }>;
  markPaid(job: Job, m: OrderMessage, chargeId: string): Promise<{ paid: boolean }>;
  receipt(job: Job, m: OrderMessage): Promise<{ emailId: string } | undefined>;
  refund(job: Job, m: OrderMessage): Promise<{ refundId: string }>;
}

/**
 * The order pipeline's effects, each under its own key, against the demo's providers: every call
 * carries the effect's key and tenant (metadata.onceboard_key / onceboard_tenant) and the outcome
 * records the provider's object id, so a reconciliation joins the two without guessing.
 */
export function demoSteps(shop: Shop, faults: Faults, providers: DemoProviders): DemoSteps {
  const { stripe, mailer } = providers;
  return {
    // External: after a crash the retry calls the provider again with the same Idempotency-Key,
    // and the provider answers with the first PaymentIntent.
    capture: (job, m) =>
      job.external(
        `capture:${m.orderId}`,
        async (claim) => {
          const intent = await stripe.paymentIntents.create(
            { amount: m.amountCents, currency: "usd", metadata: { ...onceboardMetadata(claim), order_id: m.orderId } },
            { idempotencyKey: claim.providerKey },
          );
          faults.crash("after the charge, before the claim completed");
          await faults.maybeSlow("after the charge");
          return providerOutcome(intent, { chargeId: intent.id, amountCents: intent.amount });
        },
        { payload: { amountCents: m.amountCents } },
      ),
    // Transactional: the claim commits with the order update and the accounting entry, or
    // neither does (in the shop's database: PostgreSQL's, or MariaDB's with the MySQL store).
    markPaid: (job, m, chargeId) =>
      job.transaction<{ paid: boolean }, unknown>(`mark-paid:${m.orderId}`, async (tx) => {
        await shop.rowsIn(tx, MARK_PAID, [m.tenant, m.orderId, chargeId]);
        await shop.rowsIn(tx, ACCOUNTING_ENTRY, [m.tenant, m.orderId, m.amountCents]);
        // The injected bug: the same entry written twice. A duplicate key (23505, or 1062 on
        // MariaDB) on the table's own constraint; the library counts it as uncaught, the
        // transaction (claim included) rolls back, the broker retries.
        if (faults.violation()) await shop.rowsIn(tx, ACCOUNTING_ENTRY, [m.tenant, m.orderId, m.amountCents]);
        return { paid: true };
      }),
    // At most once: the mailer does not dedupe, so a crash after the claim abandons the receipt
    // rather than risk a second email. Before the send, that email is never sent; after it, it was.
    receipt: (job, m) =>
      job.atMostOnce(`receipt:${m.orderId}`, async (claim) => {
        await faults.crashBeforeSend?.("after claiming the receipt, before sending it", async () => {
          await shop.run(UNSENT_RECEIPT, [claim.tenant, claim.key]);
        });
        const sent = await mailer.send({
          to: `billing+${m.orderId}@${m.tenant}.example`,
          subject: `Receipt for order ${m.orderId}`,
          ...onceboardMetadata(claim),
        });
        if (Math.random() < 0.5) faults.crash("after sending the receipt");
        return { emailId: sent.id };
      }),
    refund: (job, m) =>
      job.external(`refund:${m.orderId}`, async (claim) => {
        const rows = await shop.rows<{ charge_id: string | null }>(PAID_CHARGE, [m.tenant, m.orderId]);
        // A precondition, not a guard: the effect itself is protected by the claim and the key.
        const chargeId = rows[0]?.charge_id;
        if (!chargeId) throw new Error(`order ${m.orderId} is not captured yet; the broker will retry the refund`);
        const refund = await stripe.refunds.create(
          { payment_intent: chargeId, amount: m.amountCents, metadata: { ...onceboardMetadata(claim), order_id: m.orderId } },
          { idempotencyKey: claim.providerKey },
        );
        return providerOutcome(
          { id: refund.id, amount: refund.amount, currency: refund.currency, status: refund.status ?? undefined },
          { refundId: refund.id },
        );
      }),
  };
}

/** Chained messages keep a deterministic id: a redelivered parent re-sends the same child message. */
function child(m: OrderMessage, type: string, extra: Partial<OrderMessage> = {}): OrderMessage {
  return { ...m, ...extra, msgId: `${m.msgId}>${type}`, origin: "chained", publishedAt: new Date().toISOString() };
}

/** One idempotent handler per demo job type. `send` publishes the next job of the split pipeline. */
export function demoHandlers(
  shop: Shop,
  faults: Faults,
  providers: DemoProviders,
  send: (queue: DemoJobType, message: OrderMessage) => Promise<unknown>,
): Record<DemoJobType, IdempotentHandler<OrderMessage, unknown>> {
  const steps = demoSteps(shop, faults, providers);
  const tenant = (m: OrderMessage) => m.tenant;
  return {
    [JOB_TYPES.paid]: {
      kind: "job",
      tenant,
      run: async (m, job) => {
        const charge = await steps.capture(job, m);
        await steps.markPaid(job, m, charge.chargeId);
        await steps.receipt(job, m);
        return { chargeId: charge.chargeId };
      },
    },
    [JOB_TYPES.capture]: {
      kind: "job",
      tenant,
      run: async (m, job) => {
        const charge = await steps.capture(job, m);
        // Sent on every delivery, duplicates included: a crash between the capture and this send
        // must not strand the order. The next job dedupes its own effect.
        await send(JOB_TYPES.markPaid, child(m, "mark_paid", { chargeId: charge.chargeId }));
        return { chargeId: charge.chargeId };
      },
    },
    [JOB_TYPES.markPaid]: {
      kind: "job",
      tenant,
      run: async (m, job) => {
        if (!m.chargeId) throw new Error(`order.mark_paid for ${m.orderId} carries no chargeId`);
        await steps.markPaid(job, m, m.chargeId);
        await send(JOB_TYPES.receipt, child(m, "receipt"));
        return { paid: true };
      },
    },
    [JOB_TYPES.receipt]: {
      kind: "job",
      tenant,
      run: async (m, job) => ({ receipt: (await steps.receipt(job, m)) ?? null }),
    },
    [JOB_TYPES.refund]: {
      kind: "job",
      tenant,
      run: async (m, job) => {
        const refund = await steps.refund(job, m);
        await job.transaction<{ refunded: boolean }, unknown>(`mark-refunded:${m.orderId}`, async (tx) => {
          await shop.rowsIn(tx, MARK_REFUNDED, [m.tenant, m.orderId]);
          return { refunded: true };
        });
        return refund;
      },
    },
  };
}

/**
 * Queue options shared by the producer and the workers (createQueue is a no-op when it exists).
 * Run once before the processes start: pg-boss creates a partition per queue, and several
 * processes creating the same queues at once can deadlock on that DDL.
 */
export async function createDemoQueues(boss: PgBoss, settings: DemoSettings): Promise<void> {
  for (const queue of Object.values(JOB_TYPES)) {
    await boss.createQueue(`${queue}.dead-letter`);
    await boss.createQueue(queue, {
      name: queue,
      retryLimit: 100,
      retryDelay: settings.retryDelaySeconds,
      retryBackoff: false,
      expireInSeconds: settings.expireInSeconds,
    });
  }
}
