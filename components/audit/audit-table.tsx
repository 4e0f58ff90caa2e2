import Link from "next/link";
import { EmptyState } from "@/components/ui/empty-state";
import { type AuditPageFilters, auditSearch, auditTargetHref } from "@/lib/features/audit/audit-page-types";
import type { AuditResponse } from "@/lib/features/audit/contract";
import { formatUtc } from "@/lib/format";

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
      <div className="table-scroll">
        <table className="data-table" aria-labelledby="audit-heading" data-testid="audit-rows">
          <thead>
            <tr>
              <th scope="col">At</th>
              <th scope="col">Actor</th>
              <th scope="col">Action</th>
              <th scope="col">Tenant</th>
              <th scope="col">Target</th>
              <th scope="col">Result</th>
              <th scope="col">From</th>
            </tr>
          </thead>
          <tbody>
            {list.entries.map((row) => {
              const href = auditTargetHref(row);
              return (
                <tr key={row.id} data-audit-id={row.id}>
                  <td>{formatUtc(row.at)}</td>
                  <td>{row.actor}</td>
                  <td>{row.action}</td>
                  <td>{row.tenantId ?? <span className="muted">platform</span>}</td>
                  <td>{href ? <Link href={href}>{row.target}</Link> : (row.target ?? <span className="muted">—</span>)}</td>
                  <td>{row.result}</td>
                  <td>{row.ip ?? <span className="muted">—</span>}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
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
