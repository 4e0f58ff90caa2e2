import { setTimeout as delay } from "node:timers/promises";
import pino from "pino";
import type Stripe from "stripe";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { type StripeServer, startStripeServer } from "../../demo/stripe-server";
import { createEffects, type Effects, onceboardMetadata, providerOutcome } from "../../idempotency";
import type { RetryPolicy } from "../adapter";
import { reconcileProvider } from "../providers";
import { type ReconcileResult, reconcile } from "../reconcile";
import { StripeAdapter, stripeClient } from "../stripe";

export const TEST_STRIPE_KEY = "sk_test_onceboard_reconcile";
export const FAST_RETRY: RetryPolicy = { retries: 3, baseDelayMs: 5, maxDelayMs: 50 };

export interface Harness {
  db: TestDatabase;
  server: StripeServer;
  stripe: Stripe;
  effects: Effects;
  /** A capture through the library and the stripe client, as the demo's external step does it. */
  capture(tenant: string, orderId: string, amount: number, options?: { retryAfterCharge?: boolean }): Promise<void>;
  window: { from: Date; to: Date };
  run(options?: { graceSeconds?: number; pageLimit?: number; stripe?: Stripe; sleeps?: number[] }): Promise<ReconcileResult>;
  close(): Promise<void>;
}

export const TEST_WINDOW = () => ({ from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() + 3_600_000) });

export async function startHarness(): Promise<Harness> {
  const db = await createTestDatabase();
  const server = await startStripeServer({ databaseUrl: db.url, apiKeys: [TEST_STRIPE_KEY] });
  const stripe = stripeClient({
    STRIPE_API_KEY: TEST_STRIPE_KEY,
    STRIPE_HOST: "127.0.0.1",
    STRIPE_PORT: server.port,
    STRIPE_PROTOCOL: "http",
  });
  const effects = createEffects({ db: db.pool, logger: pino({ level: "silent" }), flushInterval: 0, register: false });
  const provider = reconcileProvider(
    { STRIPE_API_KEY: TEST_STRIPE_KEY, STRIPE_KEY_WINDOW_HOURS: 24, MAILER_RECONCILE_URL: undefined },
    "stripe",
  )!;
  const window = TEST_WINDOW();
  return {
    db,
    server,
    stripe,
    effects,
    window,
    async capture(tenant, orderId, amount, options = {}) {
      await effects.once({ tenant, key: `capture:${orderId}`, jobType: "order.capture", policy: "external" }, async (claim) => {
        const create = () =>
          stripe.paymentIntents.create(
            { amount, currency: "usd", metadata: { ...onceboardMetadata(claim) } },
            { idempotencyKey: claim.providerKey },
          );
        const intent = await create();
        // A worker that died after the charge redoes the step with the same key.
        if (options.retryAfterCharge) await create();
        return providerOutcome({ id: intent.id, amount: intent.amount, currency: intent.currency, status: intent.status });
      });
    },
    run(options = {}) {
      const sleeps = options.sleeps;
      const retry: RetryPolicy = {
        ...FAST_RETRY,
        sleep: async (ms) => {
          sleeps?.push(ms);
          await delay(Math.min(ms, 1100));
        },
      };
      return reconcile({
        pool: db.pool,
        adapter: new StripeAdapter(options.stripe ?? stripe, retry, options.pageLimit),
        provider,
        window,
        graceSeconds: options.graceSeconds ?? 0,
        trigger: "manual",
      });
    },
    async close() {
      await effects.close();
      await server.close();
      await db.drop();
    },
  };
}
