import type { ReconciliationRun } from "@/lib/features/reconciliation/contract";
import { FINDING_KIND_LABELS, FINDING_KINDS } from "@/lib/features/reconciliation/reconciliation-types";
import { formatCount, formatDuration, formatUtc } from "@/lib/format";
import { EmptyState } from "../ui/empty-state";
import { RunProgress } from "./run-progress";

const STATUS_TONE = { running: "warning", completed: "success", failed: "danger" } as const;

function RunCounts({ run }: { run: ReconciliationRun }) {
  if (run.counts === null) return <span className="muted">your tenant's findings are listed below</span>;
  const found = FINDING_KINDS.filter((kind) => (run.counts?.[kind] ?? 0) > 0);
  if (found.length === 0) return <span>none</span>;
  return (
    <span>
      {found.map((kind, i) => (
        <span key={kind}>
          {i > 0 ? " · " : ""}
          <span className={kind === "duplicated_at_provider" ? "text-danger" : undefined}>
            {formatCount(run.counts?.[kind] ?? 0)} {FINDING_KIND_LABELS[kind]}
          </span>
        </span>
      ))}
    </span>
  );
}

/** The latest reconciliation runs: which provider and window, how far, what they found, how long. */
export function RunsTable({ runs, configured }: { runs: ReconciliationRun[]; configured: boolean }) {
  if (runs.length === 0)
    return (
      <EmptyState title="No reconciliation runs yet">
        <p className="muted" data-testid="no-runs">
          {configured ? (
            <>
              No run has been made yet. The maintenance loop reconciles each configured provider every few minutes;{" "}
              <code>npm run reconcile</code> runs one by hand.
            </>
          ) : (
            "None can run until a provider is configured."
          )}
        </p>
      </EmptyState>
    );
  return (
    <section className="panel panel-flush" aria-labelledby="runs-heading">
      <div className="panel-header">
        <h2 id="runs-heading">Runs</h2>
        <span className="panel-meta">newest first</span>
      </div>
      <div className="table-scroll">
        <table className="data-table" aria-labelledby="runs-heading" data-testid="runs-table">
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Window</th>
              <th scope="col">Status</th>
              <th scope="col">Progress</th>
              <th scope="col">Findings</th>
              <th scope="col">Duration</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((run) => (
              <tr key={run.id} data-testid="run-row" data-status={run.status}>
                <th scope="row">{run.provider}</th>
                <td>
                  {formatUtc(run.windowFrom, { seconds: false })} → {formatUtc(run.windowTo, { seconds: false })}
                </td>
                <td>
                  <span className="badge" data-tone={STATUS_TONE[run.status]}>
                    {run.status}
                  </span>
                  {run.error ? <div className="muted">{run.error}</div> : null}
                </td>
                <td>
                  <RunProgress run={run} />
                </td>
                <td>
                  <RunCounts run={run} />
                </td>
                <td>{formatDuration(run.durationSeconds, { whole: true })}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
