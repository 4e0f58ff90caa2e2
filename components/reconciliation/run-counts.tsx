import type { ReconciliationRun } from "@/lib/features/reconciliation/contract";
import { FINDING_KIND_LABELS, FINDING_KINDS } from "@/lib/features/reconciliation/reconciliation-types";
import { formatCount } from "@/lib/format";

/**
 * What a run found, per kind ("14 duplicated at provider · 6 missing at provider"), a double charge
 * in red; each count stays on one line, the list wraps between them.
 */
export function RunCounts({ run }: { run: ReconciliationRun }) {
  if (run.counts === null) return <span className="muted">your tenant's findings are listed below</span>;
  if (run.status === "running") return <span className="muted">findings once it has compared</span>;
  if (run.status === "failed") return <span className="muted">none recorded: the run failed</span>;
  const found = FINDING_KINDS.filter((kind) => (run.counts?.[kind] ?? 0) > 0);
  if (found.length === 0) return <span>no findings</span>;
  return (
    <span className="run-counts">
      {found.map((kind, i) => (
        <span key={kind}>
          {i > 0 ? " · " : ""}
          <span className={kind === "duplicated_at_provider" ? "run-count text-danger" : "run-count"}>
            {formatCount(run.counts?.[kind] ?? 0)} {FINDING_KIND_LABELS[kind]}
          </span>
        </span>
      ))}
    </span>
  );
}
