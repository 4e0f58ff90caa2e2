"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
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
import { FindingKindBadge } from "./finding-kind-badge";
import { FindingStateForm } from "./finding-state-form";
import { OurSide } from "./our-side";
import { TheirSide } from "./their-side";

/** One finding: what disagrees, our effect and the provider's objects side by side, and what an operator said. */
export function FindingDetail({ id, filters, role }: { id: string; filters: FindingFilters; role: Role }) {
  const query = useQuery({
    queryKey: findingQueryKey(id),
    queryFn: ({ signal }) => fetchJson<Detail>(findingApiUrl(id), signal),
  });
  return (
    <section className="panel finding-detail" aria-labelledby="finding-heading" data-testid="finding-detail">
      <div className="panel-header">
        <h2 id="finding-heading">Finding {id}</h2>
        <Link href={reconciliationHref({ ...filters, finding: null })} className="button-quiet" scroll={false}>
          Close
        </Link>
      </div>
      <div className="panel-body">
        <QueryStates query={query} what="this finding" skeleton={<p role="status">Loading the finding…</p>}>
          {(f) => (
            <>
              <p className="verdict">
                <FindingKindBadge kind={f.kind} /> {f.detail}
              </p>
              <p className="muted">
                {f.provider} · {f.tenant ?? "no tenant named"} · {f.jobType ?? "no job type"} · first seen{" "}
                {formatUtc(f.firstSeenAt)}, last seen {formatUtc(f.lastSeenAt)} · {f.state}
                {f.stateChangedBy ? ` by ${f.stateChangedBy} at ${formatUtc(f.stateChangedAt)}` : ""}
                {f.stateNote ? `: “${f.stateNote}”` : ""}
              </p>
              <div className="finding-sides">
                <OurSide ours={f.ours} tenant={f.tenant} />
                <TheirSide provider={f.provider} theirs={f.theirs} />
              </div>
              {role !== "viewer" ? <FindingStateForm id={f.id} state={f.state} /> : null}
            </>
          )}
        </QueryStates>
      </div>
    </section>
  );
}
