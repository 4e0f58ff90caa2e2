"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { ApiClientError, fetchJson } from "@/components/api/fetch-json";
import { useConsoleWritable } from "@/components/shell/console-mode";
import { EmptyState } from "@/components/ui/empty-state";
import { ErrorState } from "@/components/ui/error-state";
import type { Role } from "@/lib/auth/auth-types";
import type { EffectDetail } from "@/lib/features/keys-and-effects/contract";
import { keyDetailQueryKey, keyDetailUrl } from "@/lib/features/keys-and-effects/keys-types";
import { formatUtc } from "@/lib/format";
import { DeliveryTimeline } from "./delivery-timeline";
import { ProviderVerdict } from "./provider-verdict";
import { ReleaseButton } from "./release-button";
import { StatusBadge } from "./status-badge";

const time = (iso: string | null) => formatUtc(iso, { empty: "–" });

/** The selected key: its verdict, facts, the job's steps, its deliveries, outcome and violations, and Release for a stuck claim. */
export function KeyDetail({
  tenant,
  platform,
  effectKey,
  role,
  linkTo,
}: {
  tenant: string;
  platform: boolean;
  effectKey: string;
  role: Role;
  linkTo: (key?: string) => string;
}) {
  const url = keyDetailUrl(tenant, effectKey, platform);
  const writable = useConsoleWritable();
  const detail = useQuery({
    queryKey: keyDetailQueryKey(url),
    queryFn: ({ signal }) => fetchJson<EffectDetail>(url, signal),
    refetchInterval: 10_000,
  });
  if (detail.isPending) return <p role="status">Loading {effectKey}…</p>;
  if (detail.isError) {
    const notFound = detail.error instanceof ApiClientError && detail.error.status === 404;
    return notFound ? (
      <EmptyState title="No such key">
        <p>
          Tenant {tenant} has no effect <code>{effectKey}</code> (it may have been pruned by retention).
        </p>
      </EmptyState>
    ) : (
      <ErrorState title="The key failed to load" message={detail.error.message} onRetry={() => void detail.refetch()} />
    );
  }
  const e = detail.data;
  return (
    <section className="panel key-detail" aria-labelledby="key-detail-heading" data-testid="key-detail">
      <div className="panel-header">
        <h2 id="key-detail-heading" className="key-title">
          {e.key} <StatusBadge status={e.status} stuck={e.stuck} />
        </h2>
      </div>
      <div className="panel-body">
        <p className="verdict" data-testid="verdict">
          {e.verdict}
        </p>
        {e.providerSide ? <ProviderVerdict side={e.providerSide} /> : null}
        <dl className="key-facts">
          <dt>Job type</dt>
          <dd>{e.jobType}</dd>
          <dt>Policy</dt>
          <dd>{e.policy}</dd>
          <dt>Attempts</dt>
          <dd>{e.attempts}</dd>
          <dt>Duplicates</dt>
          <dd>
            {e.duplicateCount}
            {e.lastDuplicateAt ? ` (last ${time(e.lastDuplicateAt)})` : ""}
          </dd>
          <dt>Provider key</dt>
          <dd>
            <code>{e.providerKey}</code>
          </dd>
          <dt>First message</dt>
          <dd>
            <code>{e.firstMessageId ?? "–"}</code>
          </dd>
          <dt>Last message</dt>
          <dd>
            <code>{e.lastMessageId ?? "–"}</code>
          </dd>
          <dt>Created</dt>
          <dd>{time(e.createdAt)}</dd>
          <dt>Completed</dt>
          <dd>{time(e.completedAt)}</dd>
          {e.status === "in_progress" ? (
            <>
              <dt>Owner</dt>
              <dd>{e.owner ?? "–"}</dd>
              <dt>Lease until</dt>
              <dd>{time(e.leaseUntil)}</dd>
            </>
          ) : null}
          {e.error ? (
            <>
              <dt>Error</dt>
              <dd>{e.error}</dd>
            </>
          ) : null}
        </dl>

        <h3>The job's steps</h3>
        <div className="steps" data-testid="steps">
          {e.steps.map((s) => (
            <Link key={s.key} href={linkTo(s.key)} className="step" aria-current={s.key === e.key ? "true" : undefined}>
              <span className="step-key">{s.key}</span>
              <StatusBadge status={s.status} />
              <span className="muted">
                {s.jobType} · attempt {s.attempt} · {s.duplicateCount} dup
              </span>
            </Link>
          ))}
        </div>

        <h3>Deliveries</h3>
        <DeliveryTimeline deliveries={e.timeline} total={e.timelineTotal} />

        <h3>Outcome</h3>
        <pre className="outcome" data-testid="outcome">
          {JSON.stringify(e.outcome, null, 2)}
        </pre>

        <h3>Uncaught violations</h3>
        {e.violations.length === 0 ? (
          <p className="muted">None recorded for this key.</p>
        ) : (
          <ul data-testid="key-violations">
            {e.violations.map((v) => (
              <li key={v.id} data-testid="key-violation">
                {v.constraint} ({v.jobType}) at {time(v.occurredAt)}
                {v.messageId ? <span className="muted"> · message {v.messageId}</span> : null}
                {v.message ? <span className="muted"> · {v.message}</span> : null}
              </li>
            ))}
          </ul>
        )}

        {role !== "viewer" && writable && e.status === "in_progress" ? (
          <ReleaseButton url={url.replace(/(\?|$)/, "/release$1")} effectKey={e.key} />
        ) : null}
      </div>
    </section>
  );
}
