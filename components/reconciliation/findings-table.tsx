"use client";

import Link from "next/link";
import { useEffect, useRef } from "react";
import type { FindingListResponse } from "@/lib/features/reconciliation/contract";
import { type FindingFilters, reconciliationHref } from "@/lib/features/reconciliation/reconciliation-types";
import { formatUtcClock, formatUtcDay } from "@/lib/format";
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

/** The id each finding's link carries, so closing a finding can give its row the focus back. */
const rowLinkId = (id: string) => `finding-link-${id}`;

/**
 * Closing a finding returns to its row: the focus goes back to the link that opened it, which
 * brings the row into view where it had scrolled away (on a phone the finding is below the list).
 */
function useFocusReturn(open: string | null | undefined) {
  const previous = useRef(open);
  useEffect(() => {
    const closed = previous.current;
    previous.current = open;
    if (closed && !open) document.getElementById(rowLinkId(closed))?.focus();
  }, [open]);
}

type ListedFinding = FindingListResponse["findings"][number];

/**
 * Each row says what, where and when in two columns, so it fits half a desktop or a phone without
 * a cut: the finding (kind, what, and where: tenant when the list spans tenants, provider, job
 * type), and when it was last seen, date over time.
 */
function findingColumns(filters: FindingFilters, everyTenant: boolean): Column<ListedFinding>[] {
  return [
    {
      id: "finding",
      label: "Finding",
      kind: "text",
      priority: 1,
      cell: (f) => (
        <>
          <FindingKindBadge kind={f.kind} />
          <Link
            href={reconciliationHref({ ...filters, finding: f.id })}
            id={rowLinkId(f.id)}
            className="finding-what"
            data-testid="finding-link"
            aria-current={filters.finding === f.id ? "true" : undefined}
            scroll={false}
          >
            {f.detail}
          </Link>
          <span className="finding-where">
            {/* A tenant's session lists its own tenant only: naming it on every row says nothing. */}
            {everyTenant ? `${f.tenant ?? "no tenant named"} · ` : ""}
            {f.provider}
            {f.jobType ? ` · ${f.jobType}` : ""}
          </span>
        </>
      ),
    },
    {
      id: "seen",
      label: "Last seen (UTC)",
      kind: "time",
      cell: (f) => (
        // Date over time: the column stays narrow enough for a phone.
        <time dateTime={f.lastSeenAt}>
          <span>{formatUtcDay(f.lastSeenAt)}</span> <span>{formatUtcClock(f.lastSeenAt).replace(/ UTC$/, "")}</span>
        </time>
      ),
      cellProps: () => ({ className: "finding-seen" }),
    },
  ];
}

/**
 * The findings for the page's filters, newest last seen first; a row opens its finding beside the
 * list (below it on a phone).
 */
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
  useFocusReturn(filters.finding);
  return (
    <>
      {list.findings.length === 0 ? (
        <EmptyFindings state={state} basis={basis} />
      ) : (
        <section className="panel panel-flush findings-list" aria-labelledby="findings-heading">
          <div className="panel-header">
            <h2 id="findings-heading">{state[0]?.toUpperCase() + state.slice(1)} findings</h2>
            <span className="panel-meta">newest last seen first; a rerun of a window updates a finding, never adds a second</span>
          </div>
          <DataTable
            columns={findingColumns(filters, list.tenant === null)}
            rows={list.findings}
            rowKey={(f) => f.id}
            rowProps={(f) => ({
              "data-testid": "finding-row",
              "data-kind": f.kind,
              "data-finding": f.id,
              "aria-selected": filters.finding === f.id,
            })}
            labelledBy="findings-heading"
            testId="findings-table"
            className="findings-table"
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
