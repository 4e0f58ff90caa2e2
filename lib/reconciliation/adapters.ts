import type { Config } from "../config";
import type { ProviderAdapter } from "./adapter";
import { HttpJsonAdapter, type HttpJsonMapping } from "./http-json";
import { StripeAdapter, stripeClient } from "./stripe";

/** What the demo's mailer answers at its list endpoint (lib/demo/stripe-server.ts serves it). */
export const MAILER_MAPPING: HttpJsonMapping = {
  items: "messages",
  next: "next_cursor",
  id: "id",
  key: "onceboard_key",
  tenant: "onceboard_tenant",
  created: "sent_at",
};

/** The adapter a configured provider is read with. */
export function adapterFor(provider: string, config: Config): ProviderAdapter {
  if (provider === "stripe") return new StripeAdapter(stripeClient(config));
  if (provider === "mailer") {
    if (!config.MAILER_RECONCILE_URL) throw new Error("MAILER_RECONCILE_URL is not set: the mailer cannot be read");
    return new HttpJsonAdapter("mailer", config.MAILER_RECONCILE_URL, MAILER_MAPPING);
  }
  throw new Error(`unknown provider ${JSON.stringify(provider)}: stripe or mailer`);
}
