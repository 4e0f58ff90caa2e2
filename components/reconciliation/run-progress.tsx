import type { ReconciliationRun } from "@/lib/features/reconciliation/contract";
import { formatCount, formatCountOf, formatUtc } from "@/lib/format";

/**
 * How far a run got: objects read from the provider and effects compared. A running run shows a
 * live bar (a run does not know the provider's total in advance, so the bar is indeterminate)
 * and when its worker last checked in.
 */
export function RunProgress({ run }: { run: ReconciliationRun }) {
  // Null for a tenant: a run's tallies count every tenant's objects and effects.
  const seen =
    run.objectsSeen === null || run.effectsSeen === null || run.matched === null
      ? "tallies over every tenant: not shown"
      : `${formatCountOf(run.objectsSeen, "object")} · ${formatCountOf(run.effectsSeen, "effect")} · ${formatCount(run.matched)} matched`;
  if (run.status !== "running") return <span>{seen}</span>;
  return (
    <div className="run-progress" data-testid="run-progress">
      <progress aria-label={`run ${run.id} of ${run.provider}, in progress`} />
      <span>{seen}</span>
      <span className="muted">
        last heartbeat <span className="nowrap">{formatUtc(run.heartbeatAt)}</span>
      </span>
    </div>
  );
}
