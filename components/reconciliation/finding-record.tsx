import Link from "next/link";
import { keyHref } from "@/lib/features/keys-and-effects/keys-types";
import type { FindingOurs } from "@/lib/features/reconciliation/contract";

/**
 * What only Onceboard holds of a finding's effect: its key (opening it on the Keys page), its
 * status and attempts, the idempotency key it sent the provider, and the whole recorded outcome
 * (already redacted by the server).
 */
export function FindingRecord({ ours, tenant }: { ours: FindingOurs; tenant: string | null }) {
  return (
    <dl className="key-facts finding-record" data-testid="finding-ours">
      <dt>Key</dt>
      <dd>
        {ours.key && tenant ? (
          <Link href={keyHref(tenant, ours.key)} data-testid="finding-key-link">
            <code>{ours.key}</code>
          </Link>
        ) : (
          <code>{ours.key ?? "—"}</code>
        )}
      </dd>
      <dt>Effect</dt>
      <dd>
        {ours.status ?? "—"}, {ours.attempts === null ? "attempts not recorded" : `attempt ${ours.attempts}`}
      </dd>
      <dt>Provider key</dt>
      <dd>
        <code>{ours.providerKey ?? "—"}</code>
      </dd>
      <dt>Outcome</dt>
      <dd>
        {ours.outcome === null ? (
          "—"
        ) : (
          <details>
            <summary>as recorded</summary>
            <pre className="outcome">{JSON.stringify(ours.outcome, null, 2)}</pre>
          </details>
        )}
      </dd>
    </dl>
  );
}
