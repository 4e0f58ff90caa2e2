"use client";

import Link from "next/link";
import { type Column, DataTable } from "@/components/ui/data-table";
import { keyHref } from "@/lib/features/keys-and-effects/keys-types";
import type { StuckClaim } from "@/lib/features/overview/contract";
import { formatCount, formatDuration } from "@/lib/format";

/** The key names a stuck claim; how long it has been in progress and past its lease are what matter. */
const STUCK_COLUMNS: Column<StuckClaim>[] = [
  {
    id: "key",
    label: "Key",
    kind: "key",
    priority: 1,
    cell: (c) => (
      <Link href={keyHref(c.tenant, c.key)}>
        <code>{c.key}</code>
      </Link>
    ),
  },
  { id: "tenant", label: "Tenant", kind: "id", cell: (c) => c.tenant },
  { id: "job-type", label: "Job type", kind: "id", cell: (c) => c.jobType },
  { id: "age", label: "Age", kind: "number", cell: (c) => formatDuration(c.ageSeconds) },
  { id: "overdue", label: "Lease over by", kind: "number", cell: (c) => formatDuration(c.overdueSeconds) },
];

/** `browseHref`: the States page's stuck list for the Overview's tenant and job type (every stuck claim, paged). */
export function StuckClaims({ claims, total, browseHref }: { claims: StuckClaim[]; total: number; browseHref: string }) {
  return (
    <section className="panel panel-flush" aria-labelledby="stuck-heading" data-testid="stuck-claims">
      <div className="panel-header">
        <h2 id="stuck-heading">
          Stuck claims
          {total > 0 ? (
            <span className="badge" data-tone="warning">
              {formatCount(total)}
            </span>
          ) : null}
        </h2>
        <span className="panel-meta">
          in progress past their lease, now (whatever the range) ·{" "}
          <Link href={browseHref} data-testid="stuck-browse">
            browse by state
          </Link>
        </span>
      </div>
      {claims.length === 0 ? (
        <p className="panel-empty muted">No claim is past its lease.</p>
      ) : (
        <DataTable
          columns={STUCK_COLUMNS}
          rows={claims}
          rowKey={(c) => `${c.tenant}|${c.key}`}
          rowProps={() => ({ "data-testid": "stuck-claim" })}
          labelledBy="stuck-heading"
        />
      )}
    </section>
  );
}
