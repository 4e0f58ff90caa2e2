import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import type PgBoss from "pg-boss";
import type { JobContext } from "../idempotency";
import type { IdempotentHandler } from "../queues";
import type { Queryable } from "./db-types";
import { FakeMailer, FakePaymentProvider } from "./provider";
import { type DemoJobType, type DemoSettings, JOB_TYPES, type OrderMessage } from "./settings";

/** The faults a worker injects, each drawn per opportunity at its configured rate. */
export interface Faults {
  /** The worker process dies right here (SIGKILL: no cleanup, no ack). */
  crash(where: string): void;
  /** Sleeps past the effect's lease and the broker's expiry when the slow fault is drawn. */
  maybeSlow(where: string): Promise<void>;
  /** Whether mark-paid should write its accounting entry twice (uncaught unique violation). */
  violation(): boolean;
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
  };
}

export const NO_FAULTS: Faults = { crash() {}, maybeSlow: async () => {}, violation: () => false };

type Job = JobContext<pg.PoolClient>;

export interface DemoSteps {
  capture(job: Job, m: OrderMessage): Promise<{ chargeId: string; amountCents: number }>;
  markPaid(job: Job, m: OrderMessage, chargeId: string): Promise<{ paid: boolean }>;
  receipt(job: Job, m: OrderMessage): Promise<{ emailId: number } | undefined>;
}

/** The order pipeline's three effects, each under its own key. */
export function demoSteps(db: Queryable, faults: Faults): DemoSteps {
  const provider = new FakePaymentProvider(db);
  const mailer = new FakeMailer(db);
  return {
    // External: after a crash the retry calls the provider again with the same key, and the
    // provider returns the first charge.
    capture: (job, m) =>
      job.external(
        `capture:${m.orderId}`,
        async (claim) => {
          const charge = await provider.capture({
            tenant: m.tenant,
            orderId: m.orderId,
            amountCents: m.amountCents,
            idempotencyKey: claim.providerKey,
          });
          faults.crash("after the charge, before the claim completed");
          await faults.maybeSlow("after the charge");
          return { chargeId: charge.chargeId, amountCents: charge.amountCents };
        },
        { payload: { amountCents: m.amountCents } },
      ),
    // Transactional: the claim commits with the order update and the accounting entry, or
    // neither does.
    markPaid: (job, m, chargeId) =>
      job.transaction(`mark-paid:${m.orderId}`, async (tx) => {
        await tx.query(
          `UPDATE demo_orders SET status = 'paid', charge_id = $3, paid_at = now()
            WHERE tenant_id = $1 AND order_id = $2 AND status = 'pending'`,
          [m.tenant, m.orderId, chargeId],
        );
        const entry = `INSERT INTO demo_accounting_entries (tenant_id, order_id, kind, amount_cents) VALUES ($1, $2, 'capture', $3)`;
        await tx.query(entry, [m.tenant, m.orderId, m.amountCents]);
        // The injected bug: the same entry written twice. 23505 on the table's own constraint;
        // the library counts it as uncaught, the transaction (claim included) rolls back, the
        // broker retries.
        if (faults.violation()) await tx.query(entry, [m.tenant, m.orderId, m.amountCents]);
        return { paid: true };
      }),
    // At most once: the mailer does not dedupe, so a crash after the claim abandons the receipt
    // rather than risk a second email.
    receipt: (job, m) =>
      job.atMostOnce(`receipt:${m.orderId}`, async () => {
        const sent = await mailer.send({
          tenant: m.tenant,
          orderId: m.orderId,
          recipient: `billing+${m.orderId}@${m.tenant}.example`,
          subject: `Receipt for order ${m.orderId}`,
          messageId: m.msgId,
        });
        if (Math.random() < 0.5) faults.crash("after sending the receipt");
        return sent;
      }),
  };
}

/** Chained messages keep a deterministic id: a redelivered parent re-sends the same child message. */
function child(m: OrderMessage, type: string, extra: Partial<OrderMessage> = {}): OrderMessage {
  return { ...m, ...extra, msgId: `${m.msgId}>${type}`, origin: "chained", publishedAt: new Date().toISOString() };
}

/** One idempotent handler per demo job type. `send` publishes the next job of the split pipeline. */
export function demoHandlers(
  db: Queryable,
  faults: Faults,
  send: (queue: DemoJobType, message: OrderMessage) => Promise<unknown>,
): Record<DemoJobType, IdempotentHandler<OrderMessage, unknown>> {
  const steps = demoSteps(db, faults);
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
        const provider = new FakePaymentProvider(db);
        const refund = await job.external(`refund:${m.orderId}`, async (claim) => {
          const { rows } = await db.query<{ paid: boolean }>(
            "SELECT paid_at IS NOT NULL AS paid FROM demo_orders WHERE tenant_id = $1 AND order_id = $2",
            [m.tenant, m.orderId],
          );
          // A precondition, not a guard: the effect itself is protected by the claim and the key.
          if (!rows[0]?.paid) throw new Error(`order ${m.orderId} is not captured yet; the broker will retry the refund`);
          const r = await provider.refund({
            tenant: m.tenant,
            orderId: m.orderId,
            amountCents: m.amountCents,
            idempotencyKey: claim.providerKey,
          });
          return { refundId: r.chargeId };
        });
        await job.transaction(`mark-refunded:${m.orderId}`, async (tx) => {
          await tx.query(
            "UPDATE demo_orders SET status = 'refunded' WHERE tenant_id = $1 AND order_id = $2 AND status = 'paid'",
            [m.tenant, m.orderId],
          );
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
