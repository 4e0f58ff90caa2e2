import type { ProviderSetup } from "@/lib/features/reconciliation/provider-setup-types";
import { EmptyState } from "../ui/empty-state";

/**
 * Shown when reconciliation cannot run here: no providers file, a file with mistakes, or providers
 * whose credentials are not set. It says what is missing and how to configure it, because an empty
 * list of findings would otherwise read as "the provider and Onceboard agree".
 */
export function ProviderSetupNotice({ setup }: { setup: ProviderSetup }) {
  const unreadable = setup.providers.filter((p) => !p.configured);
  if (setup.error !== null) {
    return (
      <EmptyState title="Reconciliation is not configured: the providers file has mistakes">
        <pre className="muted" data-testid="providers-file-error">
          {setup.error}
        </pre>
        <p className="muted">
          Fix the file {setup.variable} names (docs/reconciliation.md, "Configuring providers") and restart.
        </p>
      </EmptyState>
    );
  }
  if (setup.providers.length === 0) {
    return (
      <EmptyState title="No provider is configured">
        <p className="muted" data-testid="no-provider-configured">
          Nothing is reconciled here, so nothing has been compared with a provider.{" "}
          {setup.fileSet ? `The file ${setup.variable} names lists no provider.` : `${setup.variable} is not set.`} Point it at a
          JSON file that names each provider (Stripe, or any HTTP+JSON list endpoint), the job types and steps (key prefixes)
          whose effects it holds and the fields to compare: see docs/reconciliation.md, "Configuring providers".
        </p>
      </EmptyState>
    );
  }
  if (unreadable.length === 0) return null;
  return (
    <div className="banner" data-tone="warning" role="status" data-testid="providers-not-configured">
      {unreadable.map((p) => (
        <p key={p.name}>
          {p.label} cannot be read here, so its job types ({p.jobTypes.join(", ")}) are not reconciled: {p.notConfiguredReason}.
        </p>
      ))}
    </div>
  );
}
