import Link from "next/link";
import { type Column, DataTable } from "@/components/ui/data-table";
import type { ViolationTotalsResponse } from "@/lib/features/violations/contract";
import { type ViolationListFilters, violationsHref } from "@/lib/features/violations/violations-types";
import { formatCount, formatCountOf, formatUtc } from "@/lib/format";

type ViolationGroup = ViolationTotalsResponse["groups"][number];

/** A group is named by its constraint; its count narrows the list below to it. */
function totalColumns(filters: ViolationListFilters): Column<ViolationGroup>[] {
  return [
    {
      id: "violations",
      label: "Violations",
      kind: "number",
      cell: (g) => (
        <Link
          href={violationsHref({ ...filters, tenant: g.tenant, jobType: g.jobType, constraint: g.constraint, cursor: null })}
          data-testid="violation-total-link"
        >
          {formatCount(g.count)}
        </Link>
      ),
    },
    { id: "constraint", label: "Constraint", kind: "id", priority: 1, rowHeader: true, cell: (g) => <code>{g.constraint}</code> },
    { id: "job-type", label: "Job type", kind: "id", cell: (g) => g.jobType },
    { id: "tenant", label: "Tenant", kind: "id", cell: (g) => g.tenant },
    { id: "keys", label: "Keys", kind: "number", cell: (g) => formatCount(g.keys) },
    { id: "last", label: "Last (UTC)", kind: "time", cell: (g) => formatUtc(g.lastSeen).replace(" UTC", "") },
  ];
}

/**
 * The list's totals per (tenant, job type, constraint), most first: read with the list's own
 * filter and window, so the total is the number of rows the list below pages through. Each group
 * narrows the list to itself.
 */
export function ViolationTotals({ totals, filters }: { totals: ViolationTotalsResponse; filters: ViolationListFilters }) {
  if (totals.total === 0) return null;
  const unlisted = totals.groupCount - totals.groups.length;
  return (
    <section className="panel panel-flush" aria-labelledby="violation-totals-heading" data-testid="violation-totals">
      <div className="panel-header">
        <h2 id="violation-totals-heading">
          Totals{" "}
          <span className="badge" data-tone="danger" data-testid="violations-total">
            {formatCount(totals.total)}
          </span>
        </h2>
        <span className="panel-meta">
          {formatCountOf(totals.total, "violation")} in {formatCountOf(totals.groupCount, "group")} of tenant, job type and
          constraint, {formatUtc(totals.from, { seconds: false })} – {formatUtc(totals.to, { seconds: false })}; most first
        </span>
      </div>
      <DataTable
        columns={totalColumns(filters)}
        rows={totals.groups}
        rowKey={(g) => `${g.tenant}|${g.jobType}|${g.constraint}`}
        rowProps={() => ({ "data-testid": "violation-total" })}
        labelledBy="violation-totals-heading"
      />
      {unlisted > 0 ? (
        <p className="panel-body muted">
          {formatCountOf(unlisted, "smaller group")} not listed here; the total counts their violations, and the list below holds
          them.
        </p>
      ) : null}
    </section>
  );
}
