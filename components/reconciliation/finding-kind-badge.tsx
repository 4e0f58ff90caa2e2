import { FINDING_KIND_LABELS, type FindingKind } from "@/lib/features/reconciliation/reconciliation-types";

// A double charge pages someone; pending is not an alarm; the rest are tickets.
const TONE: Record<FindingKind, "danger" | "warning" | undefined> = {
  duplicated_at_provider: "danger",
  missing_at_provider: "warning",
  unknown_to_onceboard: "warning",
  drift: "warning",
  pending: undefined,
};

export function FindingKindBadge({ kind }: { kind: FindingKind }) {
  return (
    <span className="badge" data-tone={TONE[kind]} data-kind={kind}>
      {FINDING_KIND_LABELS[kind]}
    </span>
  );
}
