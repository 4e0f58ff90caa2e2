import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import pino from "pino";
import type Stripe from "stripe";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { demoProvidersFile } from "../../demo/providers-file";
import { type StripeServer, startStripeServer } from "../../demo/stripe-server";
import { createEffects, type Effects, onceboardMetadata, providerOutcome } from "../../idempotency";
import type { RetryPolicy } from "../adapter";
import { parseProviders, type ReconcileProvider } from "../providers";
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
  /** A providers file naming the demo's Stripe entry alone (ONCEBOARD_PROVIDERS_FILE for a CLI or a schedule). */
  providersFile: string;
  /** The demo's Stripe entry, as the reconciler sees it. */
  provider: ReconcileProvider;
  run(options?: { graceSeconds?: number; pageLimit?: number; stripe?: Stripe; sleeps?: number[] }): Promise<ReconcileResult>;
  close(): Promise<void>;
}

/** One of the demo's providers as the reconciler sees it, from the file the demo writes for the console. */
export function demoProvider(
  name: "stripe" | "mailer",
  endpoints: { mailerUrl: string },
  credentials: { STRIPE_API_KEY: string | undefined },
): ReconcileProvider {
  const providers = parseProviders(demoProvidersFile(endpoints), "the demo's providers", credentials);
  return providers.find((provider) => provider.name === name) as ReconcileProvider;
}

/** The demo's Stripe entry alone, as a providers file (ONCEBOARD_PROVIDERS_FILE) for a test's CLI or schedule. */
export function writeStripeProvidersFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-providers-"));
  const file = path.join(dir, "providers.json");
  const demo = demoProvidersFile({ mailerUrl: "http://127.0.0.1:9/unused" });
  fs.writeFileSync(file, JSON.stringify({ providers: demo.providers.filter((p) => p.name === "stripe") }));
  return file;
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
  const provider = demoProvider("stripe", { mailerUrl: "http://127.0.0.1:9/unused" }, { STRIPE_API_KEY: TEST_STRIPE_KEY });
  const providersFile = writeStripeProvidersFile();
  const window = TEST_WINDOW();
  return {
    db,
    server,
    stripe,
    effects,
    window,
    providersFile,
    provider,
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
      fs.rmSync(path.dirname(providersFile), { recursive: true, force: true });
    },
  };
}
