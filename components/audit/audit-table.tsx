import Link from "next/link";
import { type Column, DataTable } from "@/components/ui/data-table";
import { EmptyState } from "@/components/ui/empty-state";
import { type AuditPageFilters, auditSearch, auditTargetHref } from "@/lib/features/audit/audit-page-types";
import type { AuditResponse } from "@/lib/features/audit/contract";
import { formatUtc } from "@/lib/format";

type AuditRow = AuditResponse["entries"][number];

const none = <span className="muted">—</span>;

/** A row is named by its action; who, on what and whether it worked are scanned; where from is detail. */
const AUDIT_COLUMNS: Column<AuditRow>[] = [
  { id: "at", label: "At", kind: "time", cell: (row) => formatUtc(row.at) },
  { id: "actor", label: "Actor", kind: "text", cell: (row) => row.actor },
  { id: "action", label: "Action", kind: "id", priority: 1, cell: (row) => row.action },
  { id: "tenant", label: "Tenant", kind: "id", cell: (row) => row.tenantId ?? <span className="muted">platform</span> },
  {
    id: "target",
    label: "Target",
    kind: "key",
    cell: (row) => {
      const href = auditTargetHref(row);
      return href ? <Link href={href}>{row.target}</Link> : (row.target ?? none);
    },
  },
  {
    id: "result",
    label: "Result",
    kind: "id",
    // A write on a MySQL effects store is audited before it is tried: its row says what came of it.
    cell: (row) =>
      row.outcome === undefined ? (
        row.result
      ) : (
        <span title="audited before it was tried on the MySQL effects store; the outcome is the row recorded after it under the same request">
          {row.result} → {row.outcome === "unknown" ? <strong>outcome unknown</strong> : row.outcome}
        </span>
      ),
  },
  { id: "from", label: "From", kind: "id", priority: 3, cell: (row) => row.ip ?? none },
];

/** Audit rows newest first; each target links to its key or token; the next page by keyset cursor. */
export function AuditTable({ list, filters }: { list: AuditResponse; filters: AuditPageFilters }) {
  if (list.entries.length === 0) {
    return (
      <EmptyState title="No audit rows">
        <p className="muted">Nothing was audited for these filters.</p>
      </EmptyState>
    );
  }
  return (
    <section className="panel panel-flush" aria-labelledby="audit-heading">
      <div className="panel-header">
        <h2 id="audit-heading">Audit log</h2>
        <span className="panel-meta">newest first; append-only and hash-chained</span>
      </div>
      <DataTable
        columns={AUDIT_COLUMNS}
        rows={list.entries}
        rowKey={(row) => row.id}
        rowProps={(row) => ({ "data-audit-id": row.id })}
        labelledBy="audit-heading"
        testId="audit-rows"
      />
      {list.nextCursor ? (
        <p className="panel-body">
          <Link href={`/audit?${auditSearch(filters, { cursor: list.nextCursor })}`} rel="next">
            Older rows
          </Link>
        </p>
      ) : null}
    </section>
  );
}
