import Link from "next/link";
import { EmptyState } from "@/components/ui/empty-state";
import { keyHref } from "@/lib/features/keys-and-effects/keys-types";
import type { ViolationListResponse, ViolationTotalsResponse } from "@/lib/features/violations/contract";
import { type ViolationListFilters, violationsHref } from "@/lib/features/violations/violations-types";
import { formatUtc } from "@/lib/format";
import { ViolationFilters } from "./violation-filters";
import { ViolationTotals } from "./violation-totals";

/** Every uncaught violation, one row per occurrence, each linking to its own key's page. */
export function ViolationsTable({
  list,
  totals,
  filters,
  platform,
}: {
  list: ViolationListResponse;
  /** The list's totals, read with the same filter (GET /api/v1/violations/groups). */
  totals: ViolationTotalsResponse;
  filters: ViolationListFilters;
  platform: boolean;
}) {
  return (
    <>
      <ViolationFilters filters={filters} platform={platform} />
      <ViolationTotals totals={totals} filters={filters} />
      {list.violations.length === 0 ? (
        <EmptyState title="No uncaught violations">
          <p className="muted">No handler hit a unique constraint with its own writes for these filters.</p>
        </EmptyState>
      ) : (
        <section className="panel panel-flush" aria-labelledby="violations-heading">
          <div className="panel-header">
            <h2 id="violations-heading">Affected keys</h2>
            <span className="panel-meta">newest first; each row is one violation, recorded by the worker when it happened</span>
          </div>
          <div className="table-scroll">
            <table className="data-table" aria-labelledby="violations-heading">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Key</th>
                  <th scope="col">Tenant</th>
                  <th scope="col">Job type</th>
                  <th scope="col">Constraint</th>
                  <th scope="col">Message id</th>
                  <th scope="col">Error</th>
                </tr>
              </thead>
              <tbody>
                {list.violations.map((v) => (
                  <tr key={v.id} data-testid="violation-row">
                    <td>{formatUtc(v.occurredAt)}</td>
                    <th scope="row">
                      <Link href={keyHref(v.tenant, v.key)} data-testid="violation-key">
                        <code>{v.key}</code>
                      </Link>
                    </th>
                    <td>{v.tenant}</td>
                    <td>{v.jobType}</td>
                    <td>
                      <code>{v.constraint}</code>
                    </td>
                    <td>{v.messageId ? <code>{v.messageId}</code> : <span className="muted">—</span>}</td>
                    <td className="muted">{v.message ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
      {list.nextCursor ? (
        <p>
          <Link href={violationsHref({ ...filters, cursor: list.nextCursor })} data-testid="violations-next" className="button">
            Older violations
          </Link>
        </p>
      ) : null}
    </>
  );
}
