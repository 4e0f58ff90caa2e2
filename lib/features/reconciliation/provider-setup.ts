import { ConfigError, loadConfig } from "../../config";
import { PROVIDERS_FILE_VARIABLE, reconcileProviders } from "../../reconciliation/providers";
import type { ProviderSetup } from "./provider-setup-types";

/** The console's providers as the page shows them; a tenant is not told the file's path or its mistakes. */
export function readProviderSetup(options: { platform: boolean }): ProviderSetup {
  const config = loadConfig();
  const base = { variable: PROVIDERS_FILE_VARIABLE, fileSet: config.ONCEBOARD_PROVIDERS_FILE !== undefined };
  try {
    const providers = reconcileProviders(config).map(({ name, label, jobTypes, configured, notConfiguredReason }) => ({
      name,
      label,
      jobTypes,
      configured,
      notConfiguredReason,
    }));
    return { ...base, error: null, providers };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { ...base, error: options.platform ? error.message : "the providers file has mistakes", providers: [] };
  }
}
