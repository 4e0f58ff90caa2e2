import Link from "next/link";
import { type FindingFilters, type FindingListResponse, reconciliationHref } from "@/lib/console/reconciliation-types";
import { formatUtc } from "@/lib/format";
import { EmptyState } from "../ui/empty-state";
import { FindingKindBadge } from "./finding-kind-badge";

/** The findings for the page's filters, newest last seen first; a row opens its detail beside the list. */
export function FindingsTable({ list, filters }: { list: FindingListResponse; filters: FindingFilters }) {
  const state = filters.state ?? "open";
  return (
    <>
      {list.findings.length === 0 ? (
        <EmptyState title={`No ${state} findings`}>
          <p className="muted">The provider and Onceboard agree for these filters: every effect matched its provider's object.</p>
        </EmptyState>
      ) : (
        <section className="panel panel-flush" aria-labelledby="findings-heading">
          <div className="panel-header">
            <h2 id="findings-heading">{state[0]?.toUpperCase() + state.slice(1)} findings</h2>
            <span className="panel-meta">newest last seen first; a rerun of a window updates a finding, never adds a second</span>
          </div>
          <div className="table-scroll">
            <table className="data-table" aria-labelledby="findings-heading" data-testid="findings-table">
              <thead>
                <tr>
                  <th scope="col">Kind</th>
                  <th scope="col">What</th>
                  <th scope="col">Provider</th>
                  <th scope="col">Tenant</th>
                  <th scope="col">Job type</th>
                  <th scope="col">Last seen</th>
                </tr>
              </thead>
              <tbody>
                {list.findings.map((f) => (
                  <tr key={f.id} data-testid="finding-row" data-kind={f.kind} aria-selected={filters.finding === f.id}>
                    <td>
                      <FindingKindBadge kind={f.kind} />
                    </td>
                    <th scope="row">
                      <Link href={reconciliationHref({ ...filters, finding: f.id })} data-testid="finding-link" scroll={false}>
                        {f.detail}
                      </Link>
                    </th>
                    <td>{f.provider}</td>
                    <td>{f.tenant ?? <span className="muted">none named</span>}</td>
                    <td>{f.jobType ?? "—"}</td>
                    <td>{formatUtc(f.lastSeenAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
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
