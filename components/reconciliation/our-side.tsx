import Link from "next/link";
import { keyHref } from "@/lib/features/keys-and-effects/keys-types";
import type { FindingOurs } from "@/lib/features/reconciliation/contract";
import { formatUtc } from "@/lib/format";

/** Onceboard's side of a finding: the effect as recorded (its outcome already redacted by the server). */
export function OurSide({ ours, tenant }: { ours: FindingOurs | null; tenant: string | null }) {
  return (
    <section className="panel finding-side" aria-labelledby="ours-heading" data-testid="finding-ours">
      <div className="panel-header">
        <h3 id="ours-heading">Onceboard</h3>
      </div>
      <div className="panel-body">
        {ours === null ? (
          <p className="muted">No effect: Onceboard never claimed this key (a path that ran without a claim).</p>
        ) : (
          <dl className="key-facts">
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
            <dt>Status</dt>
            <dd>{ours.status ?? "—"}</dd>
            <dt>Attempts</dt>
            <dd>{ours.attempts ?? "—"}</dd>
            <dt>Provider key</dt>
            <dd>
              <code>{ours.providerKey ?? "—"}</code>
            </dd>
            <dt>Created</dt>
            <dd>{formatUtc(ours.createdAt)}</dd>
            <dt>Outcome</dt>
            <dd>
              <pre className="outcome">{ours.outcome === null ? "—" : JSON.stringify(ours.outcome, null, 2)}</pre>
            </dd>
          </dl>
        )}
      </div>
    </section>
  );
}
