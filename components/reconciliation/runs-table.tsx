import type { ReconciliationRun } from "@/lib/features/reconciliation/contract";
import { FINDING_KIND_LABELS, FINDING_KINDS } from "@/lib/features/reconciliation/reconciliation-types";
import { formatCount, formatDuration, formatUtc } from "@/lib/format";
import { type Column, DataTable } from "../ui/data-table";
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
          <span className={kind === "duplicated_at_provider" ? "text-danger nowrap" : "nowrap"}>
            {formatCount(run.counts?.[kind] ?? 0)} {FINDING_KIND_LABELS[kind]}
          </span>
        </span>
      ))}
    </span>
  );
}

/** A run is named by its provider; its findings and progress wrap between counts, never inside one. */
const RUN_COLUMNS: Column<ReconciliationRun>[] = [
  { id: "provider", label: "Provider", kind: "id", priority: 1, cell: (run) => run.provider },
  {
    id: "window",
    label: "Window",
    kind: "text",
    cell: (run) => (
      <>
        <span className="nowrap">{formatUtc(run.windowFrom, { seconds: false })}</span> →{" "}
        <span className="nowrap">{formatUtc(run.windowTo, { seconds: false })}</span>
      </>
    ),
  },
  {
    id: "status",
    label: "Status",
    kind: "text",
    cell: (run) => (
      <>
        <span className="badge" data-tone={STATUS_TONE[run.status]}>
          {run.status}
        </span>
        {run.error ? <div className="muted">{run.error}</div> : null}
      </>
    ),
  },
  { id: "progress", label: "Progress", kind: "text", cell: (run) => <RunProgress run={run} /> },
  { id: "findings", label: "Findings", kind: "text", cell: (run) => <RunCounts run={run} /> },
  { id: "duration", label: "Duration", kind: "number", cell: (run) => formatDuration(run.durationSeconds, { whole: true }) },
];

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
      <DataTable
        columns={RUN_COLUMNS}
        rows={runs}
        rowKey={(run) => run.id}
        rowProps={(run) => ({ "data-testid": "run-row", "data-status": run.status })}
        labelledBy="runs-heading"
        testId="runs-table"
      />
    </section>
  );
}
