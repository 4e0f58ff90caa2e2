import Link from "next/link";
import type { ProviderSide } from "@/lib/features/keys-and-effects/contract";
import { reconciliationHref } from "@/lib/features/reconciliation/reconciliation-types";

/**
 * The key's verdict from the provider's side, under Onceboard's own: "ran once here · 1 payment at
 * Stripe (pi_…) · reconciled 4 min ago", in red when the provider holds two objects for the key
 * (or none), with a link to the finding that says so.
 */
export function ProviderVerdict({ side }: { side: ProviderSide }) {
  const [finding] = side.findingIds;
  return (
    <p
      className={side.tone === "danger" ? "provider-verdict text-danger" : "provider-verdict"}
      data-testid="provider-verdict"
      data-tone={side.tone}
    >
      {side.text}
      {finding ? (
        <>
          {" · "}
          <Link href={reconciliationHref({ provider: side.provider, finding })} data-testid="provider-verdict-finding">
            the finding
          </Link>
        </>
      ) : null}
    </p>
  );
}
