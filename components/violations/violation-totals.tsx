import Link from "next/link";
import type { ViolationTotalsResponse } from "@/lib/features/violations/contract";
import { type ViolationListFilters, violationsHref } from "@/lib/features/violations/violations-types";
import { formatCount, formatCountOf, formatUtc } from "@/lib/format";

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
      <div className="table-scroll">
        <table className="data-table" aria-labelledby="violation-totals-heading">
          <thead>
            <tr>
              <th scope="col" className="num">
                Violations
              </th>
              <th scope="col">Constraint</th>
              <th scope="col">Job type</th>
              <th scope="col">Tenant</th>
              <th scope="col" className="num">
                Keys
              </th>
              <th scope="col">Last (UTC)</th>
            </tr>
          </thead>
          <tbody>
            {totals.groups.map((g) => (
              <tr key={`${g.tenant}|${g.jobType}|${g.constraint}`} data-testid="violation-total">
                <td className="num">
                  <Link
                    href={violationsHref({
                      ...filters,
                      tenant: g.tenant,
                      jobType: g.jobType,
                      constraint: g.constraint,
                      cursor: null,
                    })}
                    data-testid="violation-total-link"
                  >
                    {formatCount(g.count)}
                  </Link>
                </td>
                <th scope="row">
                  <code>{g.constraint}</code>
                </th>
                <td>{g.jobType}</td>
                <td>{g.tenant}</td>
                <td className="num">{formatCount(g.keys)}</td>
                <td>{formatUtc(g.lastSeen).replace(" UTC", "")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {unlisted > 0 ? (
        <p className="panel-body muted">
          {formatCountOf(unlisted, "smaller group")} not listed here; the total counts their violations, and the list below holds
          them.
        </p>
      ) : null}
    </section>
  );
}
