import fs from "node:fs";
import path from "node:path";
import type { DemoProviderEndpoints } from "./provider";

/**
 * What the demo's mailer answers at its list endpoint (lib/demo/mailer-server.ts serves it), as the
 * generic HTTP+JSON adapter's mapping. The demo imports nothing of the console: this file holds
 * the JSON a user would write (docs/reconciliation.md), and the console reads it.
 */
export const MAILER_MAPPING = {
  items: "messages",
  next: "next_cursor",
  id: "id",
  key: "onceboard_key",
  tenant: "onceboard_tenant",
  created: "sent_at",
};

/** The demo's job types each provider holds: the capture and refund steps at Stripe, the receipt at the mailer. */
const DEMO_STRIPE_JOB_TYPES = ["order.paid", "order.capture", "order.refund"];
const DEMO_MAILER_JOB_TYPES = ["order.paid", "order.receipt"];

/**
 * The demo configures its reconciliation the way a user does: a providers file
 * (ONCEBOARD_PROVIDERS_FILE, docs/reconciliation.md), here with the mailer's URL of this start.
 */
export function demoProvidersFile(endpoints: Pick<DemoProviderEndpoints, "mailerUrl">) {
  return {
    providers: [
      {
        name: "stripe",
        label: "Stripe",
        objectNoun: "PaymentIntent",
        jobTypes: DEMO_STRIPE_JOB_TYPES,
        steps: [
          { keyPrefix: "capture:", noun: "payment" },
          { keyPrefix: "refund:", noun: "refund" },
        ],
        keyWindowHours: 24,
        keyRequired: true,
        compareFields: ["amount", "currency", "status"] as const,
        objectUrl: "https://dashboard.stripe.com/test/payments/{id}",
        adapter: { type: "stripe" as const },
      },
      {
        name: "mailer",
        label: "Mailer",
        objectNoun: "message",
        jobTypes: DEMO_MAILER_JOB_TYPES,
        steps: [{ keyPrefix: "receipt:" }],
        keyWindowHours: null,
        keyRequired: false,
        compareFields: [],
        adapter: { type: "http-json" as const, url: endpoints.mailerUrl, mapping: MAILER_MAPPING },
      },
    ],
  };
}

/** Writes the demo's providers file under the data directory (owner-only, like the rest of it) and returns its path. */
export function writeDemoProvidersFile(dataDir: string, endpoints: Pick<DemoProviderEndpoints, "mailerUrl">): string {
  const file = path.join(dataDir, "demo-providers.json");
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, `${JSON.stringify(demoProvidersFile(endpoints), null, 2)}\n`, { mode: 0o600 });
  return file;
}
