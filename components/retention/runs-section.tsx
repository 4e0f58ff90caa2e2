import type { MaintenanceRunView } from "@/lib/features/retention-and-gaps/contract";
import { formatUtc } from "@/lib/format";
import { type Column, DataTable } from "../ui/data-table";
import { EmptyState } from "../ui/empty-state";
import { RunCounts } from "./run-counts";

const MAINTENANCE_RUN_COLUMNS: Column<MaintenanceRunView>[] = [
  { id: "run", label: "Run", kind: "number", priority: 1, rowHeader: true, cell: (r) => r.id },
  { id: "started", label: "Started", kind: "time", cell: (r) => formatUtc(r.startedAt) },
  {
    id: "by",
    label: "By",
    kind: "text",
    cell: (r) => `${r.trigger}: ${r.runner}`,
  },
  { id: "result", label: "Result", kind: "text", cell: (r) => (r.error ? `${r.result}: ${r.error}` : r.result) },
  {
    id: "operations",
    label: "Operations",
    kind: "text",
    priority: 3,
    cell: (r) =>
      r.operations.length === 0
        ? "none"
        : r.operations.map((o) => `${o.kind} ${o.partition}${o.result === "ok" ? "" : ` (${o.result})`}`).join(", "),
  },
];

/** The last `shown` maintenance runs, with links to show more or fewer. */
export function RunsSection({ runs, shown, defaultShown }: { runs: MaintenanceRunView[]; shown: number; defaultShown: number }) {
  return (
    <section className="panel panel-flush" aria-labelledby="retention-runs">
      <div className="panel-header">
        <h2 id="retention-runs">Maintenance runs</h2>
        <RunCounts shown={shown} defaultShown={defaultShown} />
      </div>
      {runs.length === 0 ? (
        <EmptyState title="No maintenance run yet">
          <p>The console runs one at start and every few minutes; workers with maintain do too.</p>
        </EmptyState>
      ) : (
        <DataTable columns={MAINTENANCE_RUN_COLUMNS} rows={runs} rowKey={(r) => r.id} labelledBy="retention-runs" testId="runs" />
      )}
    </section>
  );
}
