"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useEffect, useRef } from "react";
import type { Role } from "@/lib/auth/auth-types";
import type { FindingDetail as Detail } from "@/lib/features/reconciliation/contract";
import {
  type FindingFilters,
  findingApiUrl,
  findingQueryKey,
  reconciliationHref,
} from "@/lib/features/reconciliation/reconciliation-types";
import { formatUtc } from "@/lib/format";
import { fetchJson } from "../api/fetch-json";
import { QueryStates } from "../ui/query-state";
import { FindingComparison } from "./finding-comparison";
import { FindingKindBadge } from "./finding-kind-badge";
import { FindingRecord } from "./finding-record";
import { FindingStateForm } from "./finding-state-form";

/**
 * The opened finding is brought into view, and the focus to its heading: beside the list at a
 * desktop's width it is in view already (it stays at the top of the screen while the list
 * scrolls), and the list is left where it was; on a phone, or from a link (a key's verdict, a
 * shared URL) that lands above it, the page scrolls to it.
 */
function useBroughtIntoView(id: string) {
  const section = useRef<HTMLElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: each finding opened is brought into view once
  useEffect(() => {
    const box = section.current?.getBoundingClientRect();
    if (!box) return;
    const inView = box.top >= 0 && box.top < window.innerHeight / 2;
    if (!inView) section.current?.scrollIntoView({ block: "start" });
    heading.current?.focus({ preventScroll: true });
  }, [id]);
  return { section, heading };
}

/** One finding: what disagrees, Onceboard's record and the provider's objects side by side, and what an operator said. */
export function FindingDetail({
  id,
  filters,
  role,
  providerLabel,
}: {
  id: string;
  filters: FindingFilters;
  role: Role;
  /** Provider name → what the console calls it. */
  providerLabel: (name: string) => string;
}) {
  const query = useQuery({
    queryKey: findingQueryKey(id),
    queryFn: ({ signal }) => fetchJson<Detail>(findingApiUrl(id), signal),
  });
  const { section, heading } = useBroughtIntoView(id);
  return (
    <section
      ref={section}
      className="panel finding-detail"
      aria-labelledby="finding-heading"
      data-testid="finding-detail"
      data-finding={id}
    >
      <div className="panel-header">
        <h2 id="finding-heading" ref={heading} tabIndex={-1}>
          Finding {id}
        </h2>
        <Link
          href={reconciliationHref({ ...filters, finding: null })}
          className="button button-quiet"
          scroll={false}
          data-testid="finding-close"
        >
          Close
        </Link>
      </div>
      <div className="panel-body">
        <QueryStates query={query} what="this finding" skeleton={<p role="status">Loading the finding…</p>}>
          {(f) => (
            <>
              <p className="verdict finding-verdict">
                <FindingKindBadge kind={f.kind} /> {f.detail}
              </p>
              <p className="muted finding-meta">
                {providerLabel(f.provider)} · {f.tenant ?? "no tenant named"} · {f.jobType ?? "no job type"} · first seen{" "}
                {formatUtc(f.firstSeenAt)}, last seen {formatUtc(f.lastSeenAt)} · {f.state}
                {f.stateChangedBy ? ` by ${f.stateChangedBy} at ${formatUtc(f.stateChangedAt)}` : ""}
                {f.stateNote ? `: “${f.stateNote}”` : ""}
              </p>
              <FindingComparison ours={f.ours} theirs={f.theirs} provider={providerLabel(f.provider)} />
              {f.ours ? <FindingRecord ours={f.ours} tenant={f.tenant} /> : null}
              {role !== "viewer" ? <FindingStateForm id={f.id} state={f.state} /> : null}
            </>
          )}
        </QueryStates>
      </div>
    </section>
  );
}

/** Where the open finding goes while none is: what opening one shows, so the pane is not an unexplained blank. */
export function NoFindingOpen() {
  return (
    <section className="panel finding-detail finding-detail-empty" aria-label="No finding open" data-testid="no-finding-open">
      <p className="muted">Open a finding from the list to see Onceboard's record and the provider's objects side by side.</p>
    </section>
  );
}
