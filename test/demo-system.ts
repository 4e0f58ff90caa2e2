import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pino from "pino";
import { writeDemoProvidersFile } from "../lib/demo/providers-file";
import { noFaults, type ProviderFaults, startStripeServer } from "../lib/demo/stripe-server";
import { seedProviderObjects } from "../lib/demo/stripe-storage";
import { createEffects, onceboardMetadata, providerOutcome } from "../lib/idempotency";
import { stripeClient } from "../lib/reconciliation/stripe";
import { createTestDatabase } from "./database";
import type { KnownSystem, Planted } from "./known-system";

/**
 * The demo's shape for the console-truth tests: its tenants (acme, globex), its capture step
 * (`capture:<order>`, order.capture) through the `stripe` client against the demo's
 * Stripe-compatible server, its providers file (lib/demo/providers-file.ts, as `npm start` writes
 * it), and disagreements planted with the server's own faults.
 */
const API_KEY = "sk_test_onceboard_console_truth";

export const demoSystem: KnownSystem = {
  name: "the demo (acme, globex; the Stripe-compatible server)",
  tenants: ["acme", "globex"],
  foreignJobTypes: /invoice\.settle|subscription\.renew|shipment\.label/,
  async start() {
    const db = await createTestDatabase({ poolSize: 6 });
    const server = await startStripeServer({ databaseUrl: db.url, apiKeys: [API_KEY] });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-demo-system-"));
    const env = {
      ONCEBOARD_PROVIDERS_FILE: writeDemoProvidersFile(dir, { mailerUrl: "http://127.0.0.1:9/mailer/messages" }),
      STRIPE_API_KEY: API_KEY,
      STRIPE_HOST: "127.0.0.1",
      STRIPE_PORT: String(server.port),
      STRIPE_PROTOCOL: "http",
    };
    const stripe = stripeClient({
      STRIPE_API_KEY: API_KEY,
      STRIPE_HOST: "127.0.0.1",
      STRIPE_PORT: server.port,
      STRIPE_PROTOCOL: "http",
    });
    await db.pool.query("CREATE TABLE public.demo_truth_ledger (order_id text CONSTRAINT demo_truth_ledger_order_key UNIQUE)");
    const logger = pino({ level: "silent" });
    const a = createEffects({ db: db.pool, logger, flushInterval: 0, register: false, workerId: "demo-a" });
    const b = createEffects({ db: db.pool, logger, flushInterval: 0, register: false, workerId: "demo-b" });
    const charge = (claim: { tenant: string; key: string; providerKey: string }, amount: number) =>
      stripe.paymentIntents.create(
        { amount, currency: "usd", metadata: { ...onceboardMetadata(claim) } },
        { idempotencyKey: claim.providerKey },
      );
    const capture = (
      effects: typeof a,
      tenant: string,
      order: string,
      amount: number,
      options: { attempt?: number; fault?: keyof ProviderFaults["rates"] } = {},
    ) => {
      server.faults = options.fault ? { ...noFaults(), rates: { ...noFaults().rates, [options.fault]: 1 } } : noFaults();
      return effects
        .once(
          {
            tenant,
            key: `capture:${order}`,
            jobType: "order.capture",
            policy: "external",
            messageId: `${tenant}-${order}`,
            attempt: options.attempt ?? 1,
            payload: { order, amount },
          },
          async (claim) => {
            const intent = await charge(claim, amount);
            return providerOutcome({ id: intent.id, amount: intent.amount, currency: intent.currency, status: intent.status });
          },
        )
        .finally(() => {
          server.faults = noFaults();
        });
    };
    try {
      await capture(a, "acme", "ord-1", 1200);
      await capture(b, "acme", "ord-1", 1200, { attempt: 2 });
      await capture(a, "acme", "ord-2", 800);
      // A worker dies after charging ord-3; the redelivery takes its claim over and charges again
      // with the same Idempotency-Key, which the server answers with the first PaymentIntent.
      const crashed = await a.claim({
        tenant: "acme",
        key: "capture:ord-3",
        jobType: "order.capture",
        policy: "external",
        lease: "200ms",
        messageId: "acme-ord-3",
        attempt: 1,
        payload: { order: "ord-3", amount: 4300 },
      });
      if (crashed.kind !== "owned") throw new Error(`ord-3's first claim was ${crashed.kind}`);
      await charge(crashed.claim, 4300);
      await sleep(400);
      await capture(b, "acme", "ord-3", 4300, { attempt: 2 });
      await capture(a, "acme", "ord-dup", 1000, { fault: "duplicate" });
      await seedProviderObjects(server.pool, [
        {
          id: "pi_legacy_unknown",
          amount: 50,
          created: Math.floor(Date.now() / 1000),
          metadata: { onceboard_key: "capture:ord-ghost", onceboard_tenant: "acme" },
        },
      ]);
      await a
        .once({ tenant: "acme", key: "mark-paid:ord-1", jobType: "order.mark_paid", messageId: "acme-mark-paid-1" }, async () => {
          await db.pool.query("INSERT INTO public.demo_truth_ledger (order_id) VALUES ('ord-1'), ('ord-1')");
        })
        .catch((error: { code?: string }) => {
          if (error.code !== "23505") throw error;
        });
      await capture(b, "globex", "ord-ok", 500);
      await capture(b, "globex", "ord-lost", 700, { fault: "lost" });
      await capture(b, "globex", "ord-drift", 900, { fault: "drift" });
      await a.flush();
      await b.flush();
    } finally {
      await a.close();
      await b.close();
    }
    const planted: Planted = {
      findings: [
        ["drift", "globex", "capture:ord-drift"],
        ["duplicated_at_provider", "acme", "capture:ord-dup"],
        ["missing_at_provider", "globex", "capture:ord-lost"],
        ["unknown_to_onceboard", "acme", "capture:ord-ghost"],
      ],
      matched: 4,
      effectsSeen: 7,
      activity: {
        // ord-1 twice, ord-2, ord-3 by the crashed worker and the takeover, ord-dup, ord-ok, ord-lost, ord-drift.
        "order.capture": { deliveries: 9, claims: 9, suppressions: 1, redeliveries: 2, uncaughtViolations: 0 },
        "order.mark_paid": { deliveries: 1, claims: 1, suppressions: 0, redeliveries: 0, uncaughtViolations: 1 },
      },
      violations: [["acme", "mark-paid:ord-1", "demo_truth_ledger_order_key"]],
      keys: {
        acme: ["capture:ord-1", "capture:ord-2", "capture:ord-3", "capture:ord-dup", "mark-paid:ord-1"],
        globex: ["capture:ord-drift", "capture:ord-lost", "capture:ord-ok"],
      },
      verdicts: [
        ["acme", "capture:ord-dup", "danger", /^ran once here · 2 payments at Stripe · reconciled/],
        ["acme", "capture:ord-3", "ok", /^completed here on attempt 2 · 1 payment at Stripe \(pi_/],
        ["globex", "capture:ord-lost", "danger", /^ran once here · no payment at Stripe/],
        ["acme", "mark-paid:ord-1", null, null],
      ],
      keyWindows: [["stripe", 24 * 3600]],
    };
    return {
      db,
      env,
      provider: "stripe",
      planted,
      async close() {
        await server.close();
        await db.drop();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};
