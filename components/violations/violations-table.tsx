import Link from "next/link";
import { keyHref } from "@/components/overview/overview-links";
import { EmptyState } from "@/components/ui/states";
import { type ViolationListFilters, type ViolationListResponse, violationsHref } from "@/lib/console/violations-types";
import { formatUtc } from "@/lib/format";

/** The filter form: a plain GET form, so the list is a link that can be shared. */
function ViolationFilters({ filters, platform }: { filters: ViolationListFilters; platform: boolean }) {
  return (
    <form method="get" action="/violations" className="filter-form" data-testid="violation-filters">
      {platform ? (
        <label>
          Tenant <input name="tenant" defaultValue={filters.tenant ?? ""} placeholder="all" size={12} />
        </label>
      ) : null}
      <label>
        Job type <input name="jobType" defaultValue={filters.jobType ?? ""} placeholder="all" size={14} />
      </label>
      <label>
        Constraint <input name="constraint" defaultValue={filters.constraint ?? ""} placeholder="all" size={18} />
      </label>
      <label>
        From <input name="from" defaultValue={filters.from ?? ""} placeholder="ISO 8601" size={20} />
      </label>
      <label>
        To <input name="to" defaultValue={filters.to ?? ""} placeholder="ISO 8601" size={20} />
      </label>
      <button type="submit" className="button button-quiet">
        Apply
      </button>
    </form>
  );
}

/** Every uncaught violation, one row per occurrence, each linking to its own key's page. */
export function ViolationsTable({
  list,
  filters,
  platform,
}: {
  list: ViolationListResponse;
  filters: ViolationListFilters;
  platform: boolean;
}) {
  return (
    <>
      <ViolationFilters filters={filters} platform={platform} />
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
