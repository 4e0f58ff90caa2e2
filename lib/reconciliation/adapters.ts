import type { Config } from "../config";
import type { ProviderAdapter } from "./adapter";
import { HttpJsonAdapter } from "./http-json";
import type { ReconcileProvider } from "./providers";
import { StripeAdapter, stripeClient } from "./stripe";

/** The adapter a configured provider is read with: the one its `adapter.type` in the providers file names. */
export function adapterFor(
  provider: Pick<ReconcileProvider, "name" | "adapter">,
  config: Config,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ProviderAdapter {
  const settings = provider.adapter;
  if (settings.type === "stripe") return new StripeAdapter(stripeClient(config));
  const bearer = settings.bearerTokenEnv ? env[settings.bearerTokenEnv] : undefined;
  if (settings.bearerTokenEnv && !bearer)
    throw new Error(`${settings.bearerTokenEnv} is not set: ${provider.name} cannot be read`);
  return new HttpJsonAdapter(provider.name, settings.url, settings.mapping, bearer ? { bearer } : {});
}
