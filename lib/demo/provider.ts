import { randomBytes } from "node:crypto";
import Stripe from "stripe";
import type { Queryable } from "./db-types";
import { installMailerSchema, MailerClient, type MailerServer, startMailerServer } from "./mailer-server";
import type { DemoSettings } from "./settings";
import { noFaults, type ProviderFaults, type StripeServer, startStripeServer } from "./stripe-server";
import { installProviderSchema } from "./stripe-storage";

/**
 * The demo's providers as its handlers reach them: the Stripe-compatible server through the
 * `stripe` client (host/port/protocol pointed at it, as a user points the client at Stripe), and
 * the mailer through plain HTTP. Both run in the demo's provider process (scripts/demo-provider.ts)
 * with their own storage, schema onceboard_demo_provider: "the provider", apart from the effects.
 */
export interface DemoProviderEndpoints {
  /** The secret key the demo's Stripe-compatible server accepts (a fresh one per `npm start`). */
  apiKey: string;
  stripePort: number;
  /** The mailer's messages endpoint: sends are posted to it, the reconciler lists it. */
  mailerUrl: string;
}

export interface DemoProviders {
  stripe: Stripe;
  mailer: MailerClient;
}

/** ONCEBOARD_DEMO_PROVIDER: how a demo worker finds the provider process (set by the supervisor). */
export const DEMO_PROVIDER_ENV = "ONCEBOARD_DEMO_PROVIDER";

export const newDemoApiKey = (): string => `sk_test_onceboard_demo_${randomBytes(12).toString("hex")}`;

export function demoProviderClients(endpoints: DemoProviderEndpoints): DemoProviders {
  return {
    stripe: new Stripe(endpoints.apiKey, {
      host: "127.0.0.1",
      port: endpoints.stripePort,
      protocol: "http",
      // A dropped connection is retried with the same Idempotency-Key: the server answers the first result.
      maxNetworkRetries: 2,
      telemetry: false,
    }),
    mailer: new MailerClient(endpoints.mailerUrl),
  };
}

export function demoProviderEndpointsFromEnv(env: NodeJS.ProcessEnv = process.env): DemoProviderEndpoints {
  const json = env[DEMO_PROVIDER_ENV];
  if (!json) throw new Error(`${DEMO_PROVIDER_ENV} is not set: a demo worker needs the demo's provider (npm start starts it)`);
  return JSON.parse(json) as DemoProviderEndpoints;
}

/** The disagreements the demo's Stripe-compatible server plants, at the demo's DEMO_PROVIDER_* rates. */
export function demoProviderFaults(settings: DemoSettings): ProviderFaults {
  return {
    ...noFaults(),
    rates: {
      duplicate: settings.providerDuplicate,
      lost: settings.providerLost,
      keyless: settings.providerKeyless,
      drift: settings.providerDrift,
    },
  };
}

/**
 * Makes the provider's storage once, under an advisory lock: several processes running
 * CREATE … IF NOT EXISTS at once can still collide on the catalog.
 */
export async function installDemoProviderSchema(db: Queryable): Promise<void> {
  await db.query(`SELECT pg_advisory_lock(hashtextextended('onceboard:demo-provider-schema', 0))`);
  try {
    await installProviderSchema(db as never);
    await installMailerSchema(db as never);
  } finally {
    await db.query(`SELECT pg_advisory_unlock(hashtextextended('onceboard:demo-provider-schema', 0))`);
  }
}

export interface DemoProviderServers {
  stripe: StripeServer;
  mailer: MailerServer;
  endpoints: DemoProviderEndpoints;
  close(): Promise<void>;
}

/** Both servers on loopback (port 0: any free one). */
export async function startDemoProviderServers(options: {
  databaseUrl: string;
  apiKey: string;
  stripePort?: number;
  mailerPort?: number;
  faults?: ProviderFaults;
}): Promise<DemoProviderServers> {
  const stripe = await startStripeServer({
    databaseUrl: options.databaseUrl,
    apiKeys: [options.apiKey],
    port: options.stripePort ?? 0,
    faults: options.faults ?? noFaults(),
  });
  let mailer: MailerServer;
  try {
    mailer = await startMailerServer({ databaseUrl: options.databaseUrl, port: options.mailerPort ?? 0 });
  } catch (error) {
    await stripe.close();
    throw error;
  }
  return {
    stripe,
    mailer,
    endpoints: { apiKey: options.apiKey, stripePort: stripe.port, mailerUrl: mailer.url },
    async close() {
      await Promise.all([stripe.close(), mailer.close()]);
    },
  };
}
