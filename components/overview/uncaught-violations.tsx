import type { UncaughtViolationRow } from "@/lib/console/overview-types";
import { formatAgo, formatCount } from "./format";

/**
 * Unique violations a handler raised from its own writes: not duplicates the guard caught, but
 * writes the guard let through. Each row is a bug to fix, named by its constraint.
 */
export function UncaughtViolations({ rows, now }: { rows: UncaughtViolationRow[]; now: string }) {
  const total = rows.reduce((sum, r) => sum + r.count, 0);
  return (
    <section className="panel panel-flush" aria-labelledby="uncaught-heading">
      <div className="panel-header">
        <h2 id="uncaught-heading">
          Uncaught unique violations
          {total > 0 ? (
            <span className="badge" data-tone="danger">
              {formatCount(total)}
            </span>
          ) : null}
        </h2>
        <span className="panel-meta">raised by handlers&apos; own writes</span>
      </div>
      {rows.length === 0 ? (
        <p className="panel-empty">
          <span className="ok-mark" aria-hidden="true">
            ✓
          </span>{" "}
          None in this window: every unique violation was a duplicate caught by a claim.
        </p>
      ) : (
        <div className="table-scroll">
          <table className="data-table" aria-labelledby="uncaught-heading">
            <thead>
              <tr>
                <th scope="col">Job type</th>
                <th scope="col">Constraint</th>
                <th scope="col" className="num">
                  Count
                </th>
                <th scope="col" className="num">
                  Last seen
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={`${r.jobType}/${r.constraintName}`} data-testid={`uncaught-${r.jobType}-${r.constraintName}`}>
                  <th scope="row">
                    <code className="job-type">{r.jobType}</code>
                  </th>
                  <td>
                    <code>{r.constraintName}</code>
                  </td>
                  <td className="num" data-tone="danger">
                    {formatCount(r.count)}
                  </td>
                  <td className="num muted">
                    <time dateTime={r.lastSeenAt} title={r.lastSeenAt}>
                      {formatAgo(r.lastSeenAt, now)}
                    </time>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
