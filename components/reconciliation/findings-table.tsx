import Link from "next/link";
import type { FindingListResponse } from "@/lib/features/reconciliation/contract";
import { type FindingFilters, reconciliationHref } from "@/lib/features/reconciliation/reconciliation-types";
import { formatUtc } from "@/lib/format";
import { type Column, DataTable } from "../ui/data-table";
import { EmptyState } from "../ui/empty-state";
import { FindingKindBadge } from "./finding-kind-badge";

/**
 * What an empty list rests on: `reconciled`, a completed run compared effects with a provider's
 * objects; otherwise nothing was compared, because no provider is configured, no run has been made,
 * or none of the latest completed.
 */
export type FindingsBasis = "reconciled" | "unconfigured" | "never-run" | "none-completed";

const NOTHING_COMPARED: Record<Exclude<FindingsBasis, "reconciled">, string> = {
  unconfigured: "No provider is configured here, so no effect has been compared with a provider's objects.",
  "never-run": "No reconciliation run has been made yet, so no effect has been compared with a provider's objects.",
  "none-completed":
    "None of the latest reconciliation runs completed (their errors are above), so nothing they read was compared.",
};

function EmptyFindings({ state, basis }: { state: string; basis: FindingsBasis }) {
  if (basis !== "reconciled") {
    return (
      <EmptyState title="No findings: nothing has been compared yet">
        <p className="muted" data-testid="findings-basis" data-basis={basis}>
          {NOTHING_COMPARED[basis]}
        </p>
      </EmptyState>
    );
  }
  return (
    <EmptyState title={`No ${state} findings`}>
      <p className="muted" data-testid="findings-basis" data-basis={basis}>
        {state === "open"
          ? "In the windows the completed runs covered, every effect these filters select matched its provider's object."
          : `No ${state} finding matches these filters.`}
      </p>
    </EmptyState>
  );
}

type ListedFinding = FindingListResponse["findings"][number];

/** A finding is named by what it says (a link to its detail, beside the list); kind and time are what a reader scans. */
function findingColumns(filters: FindingFilters): Column<ListedFinding>[] {
  return [
    { id: "kind", label: "Kind", kind: "badge", cell: (f) => <FindingKindBadge kind={f.kind} /> },
    {
      id: "what",
      label: "What",
      kind: "text",
      priority: 1,
      cell: (f) => (
        <Link href={reconciliationHref({ ...filters, finding: f.id })} data-testid="finding-link" scroll={false}>
          {f.detail}
        </Link>
      ),
    },
    { id: "provider", label: "Provider", kind: "id", cell: (f) => f.provider },
    { id: "tenant", label: "Tenant", kind: "id", cell: (f) => f.tenant ?? <span className="muted">none named</span> },
    { id: "job-type", label: "Job type", kind: "id", priority: 3, cell: (f) => f.jobType ?? "—" },
    { id: "last-seen", label: "Last seen", kind: "time", cell: (f) => formatUtc(f.lastSeenAt) },
  ];
}

/** The findings for the page's filters, newest last seen first; a row opens its detail beside the list. */
export function FindingsTable({
  list,
  filters,
  basis,
}: {
  list: FindingListResponse;
  filters: FindingFilters;
  basis: FindingsBasis;
}) {
  const state = filters.state ?? "open";
  return (
    <>
      {list.findings.length === 0 ? (
        <EmptyFindings state={state} basis={basis} />
      ) : (
        <section className="panel panel-flush" aria-labelledby="findings-heading">
          <div className="panel-header">
            <h2 id="findings-heading">{state[0]?.toUpperCase() + state.slice(1)} findings</h2>
            <span className="panel-meta">newest last seen first; a rerun of a window updates a finding, never adds a second</span>
          </div>
          <DataTable
            columns={findingColumns(filters)}
            rows={list.findings}
            rowKey={(f) => f.id}
            rowProps={(f) => ({ "data-testid": "finding-row", "data-kind": f.kind, "aria-selected": filters.finding === f.id })}
            labelledBy="findings-heading"
            testId="findings-table"
          />
        </section>
      )}
      {list.nextCursor ? (
        <p>
          <Link
            href={reconciliationHref({ ...filters, finding: null, cursor: list.nextCursor })}
            data-testid="findings-next"
            className="button"
          >
            Older findings
          </Link>
        </p>
      ) : null}
    </>
  );
}
