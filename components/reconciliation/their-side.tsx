import type { FindingTheirs } from "@/lib/features/reconciliation/contract";
import { formatUtc } from "@/lib/format";
import { type Column, DataTable } from "../ui/data-table";

/** An object is named by its id; its amount is the figure a drift is about, so it is never cut. */
const OBJECT_COLUMNS: Column<FindingTheirs>[] = [
  { id: "id", label: "Id", kind: "id", priority: 1, cell: (t) => <code>{t.id}</code> },
  {
    id: "amount",
    label: "Amount",
    kind: "number",
    cell: (t) => (t.amount === null ? "—" : `${t.amount}${t.currency ? ` ${t.currency}` : ""}`),
    cellProps: () => ({ "data-testid": "their-amount" }),
  },
  { id: "status", label: "Status", kind: "id", cell: (t) => t.status ?? "—" },
  { id: "created", label: "Created", kind: "time", cell: (t) => formatUtc(t.created) },
];

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
        <DataTable
          columns={OBJECT_COLUMNS}
          rows={theirs}
          rowKey={(t) => t.id}
          rowProps={() => ({ "data-testid": "their-object" })}
          caption={`${provider}'s objects`}
        />
      )}
    </section>
  );
}
