import type { FindingTheirs } from "@/lib/features/reconciliation/contract";
import { formatUtc } from "@/lib/format";

/** The provider's side of a finding: each object it holds for this key (ids, amounts, statuses, created). */
export function TheirSide({ provider, theirs }: { provider: string; theirs: FindingTheirs[] }) {
  return (
    <section className="panel finding-side" aria-labelledby="theirs-heading" data-testid="finding-theirs">
      <div className="panel-header">
        <h3 id="theirs-heading">{provider}</h3>
        <span className="panel-meta">{theirs.length === 1 ? "1 object" : `${theirs.length} objects`}</span>
      </div>
      {theirs.length === 0 ? (
        <div className="panel-body">
          <p className="muted">No object at the provider carries this key.</p>
        </div>
      ) : (
        <div className="table-scroll">
          <table className="data-table">
            <caption className="sr-only">{provider}'s objects</caption>
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Amount</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {theirs.map((t) => (
                <tr key={t.id} data-testid="their-object">
                  <th scope="row">
                    <code>{t.id}</code>
                  </th>
                  <td>{t.amount === null ? "—" : `${t.amount}${t.currency ? ` ${t.currency}` : ""}`}</td>
                  <td>{t.status ?? "—"}</td>
                  <td>{formatUtc(t.created)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
