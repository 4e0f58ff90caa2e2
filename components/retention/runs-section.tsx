import type { MaintenanceRunView } from "@/lib/features/retention-and-gaps/contract";
import { formatUtc } from "@/lib/format";
import { EmptyState } from "../ui/empty-state";
import { RunCounts } from "./run-counts";

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
        <div className="table-scroll">
          <table className="data-table" data-testid="runs">
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">Started</th>
                <th scope="col">By</th>
                <th scope="col">Result</th>
                <th scope="col">Operations</th>
              </tr>
            </thead>
            <tbody>
              {runs.map((r) => (
                <tr key={r.id}>
                  <td>{r.id}</td>
                  <td>{formatUtc(r.startedAt)}</td>
                  <td>
                    {r.trigger}: {r.runner}
                  </td>
                  <td title={r.error ?? undefined}>{r.result}</td>
                  <td>
                    {r.operations.length === 0
                      ? "none"
                      : r.operations
                          .map((o) => `${o.kind} ${o.partition}${o.result === "ok" ? "" : ` (${o.result})`}`)
                          .join(", ")}
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
