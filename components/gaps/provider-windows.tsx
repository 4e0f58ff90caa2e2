import type { ProviderWindowAdvice } from "@/lib/features/retention-and-gaps/contract";

/**
 * The providers' own key windows against the observed gaps: the redeliveries after a provider's
 * window (Stripe: 24 h) are the ones only Onceboard's record stopped, so the retention must outlast them.
 */
export function ProviderWindows({ providers }: { providers: ProviderWindowAdvice[] }) {
  if (providers.length === 0) return null;
  return (
    <div data-testid="provider-windows">
      <h3>The providers' own key windows</h3>
      <ul>
        {providers.map((p) => (
          <li key={p.provider} data-testid="provider-window" data-provider={p.provider} data-after-window={p.afterWindow}>
            <span className={p.afterWindow > 0 ? "text-danger" : undefined}>{p.message}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
