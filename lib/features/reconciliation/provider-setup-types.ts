/**
 * What the Reconciliation page may claim: which providers are configured here, so that with none
 * (or with a broken providers file) it says what is not configured and how to configure it, rather
 * than "no findings", which would read as agreement.
 */
export interface ProviderSetup {
  /** The variable that names the providers file. */
  variable: string;
  /** Whether the variable is set. */
  fileSet: boolean;
  /** Why the file could not be used (its mistakes), shown to the platform only; null when it was read. */
  error: string | null;
  providers: { name: string; label: string; jobTypes: string[]; configured: boolean; notConfiguredReason: string | null }[];
}

/** Whether any provider can be read here. */
export const anyProviderConfigured = (setup: ProviderSetup): boolean => setup.providers.some((p) => p.configured);
