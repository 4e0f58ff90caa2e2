import type { Config } from "../config";

/**
 * The providers Onceboard reconciles with, and which job types' effects each one holds. A job
 * type's external step must put `onceboardMetadata(claim)` into the provider's object and return
 * `providerOutcome(object)`; then its effects and the provider's objects join on the key.
 */
export interface ReconcileProvider {
  /** The name runs and findings carry ("stripe", "mailer"). */
  name: string;
  /** What the console calls it ("Stripe"). */
  label: string;
  /** The provider's objects in words, for findings ("PaymentIntent", "message"). */
  objectNoun: string;
  /** Job types whose effects this provider holds. */
  jobTypes: string[];
  /** Within those job types, the steps (key prefixes, "capture:") that call this provider: a multi-step job calls several. */
  keyPrefixes: string[];
  /**
   * How long the provider itself dedupes a repeated idempotency key (Stripe: 24 h), or null when
   * it does not dedupe at all. A redelivery later than this was stopped by Onceboard's record alone.
   */
  keyWindowSeconds: number | null;
  /** Whether every object of these job types must carry an Onceboard key (an object with none is a path that charged without a claim). */
  keyRequired: boolean;
  /** Compare amount/currency/status with the outcome (drift). */
  compareFields: Array<"amount" | "currency" | "status">;
  /** Whether it is configured here (a key or URL to read it with). */
  configured: boolean;
}

/** The demo's job types, mapped to the providers the demo runs (its Stripe-compatible server and its mailer). */
export const STRIPE_JOB_TYPES = ["order.paid", "order.capture", "order.refund"];
export const MAILER_JOB_TYPES = ["order.paid", "order.receipt"];

export function reconcileProviders(
  config: Pick<Config, "STRIPE_API_KEY" | "STRIPE_KEY_WINDOW_HOURS" | "MAILER_RECONCILE_URL">,
): ReconcileProvider[] {
  return [
    {
      name: "stripe",
      label: "Stripe",
      objectNoun: "PaymentIntent",
      jobTypes: STRIPE_JOB_TYPES,
      keyPrefixes: ["capture:", "refund:"],
      keyWindowSeconds: Math.round(config.STRIPE_KEY_WINDOW_HOURS * 3600),
      keyRequired: true,
      compareFields: ["amount", "currency", "status"],
      configured: config.STRIPE_API_KEY !== undefined,
    },
    {
      name: "mailer",
      label: "Mailer",
      objectNoun: "message",
      jobTypes: MAILER_JOB_TYPES,
      keyPrefixes: ["receipt:"],
      keyWindowSeconds: null,
      keyRequired: false,
      compareFields: [],
      configured: config.MAILER_RECONCILE_URL !== undefined,
    },
  ];
}

export function reconcileProvider(config: Parameters<typeof reconcileProviders>[0], name: string): ReconcileProvider | undefined {
  return reconcileProviders(config).find((provider) => provider.name === name);
}
