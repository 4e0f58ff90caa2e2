import type { EffectStatus } from "@/lib/features/keys-and-effects/effects-types";

const STATUS_TONE: Record<EffectStatus, "success" | "warning" | "danger" | undefined> = {
  completed: "success",
  in_progress: "warning",
  failed: "danger",
  abandoned: "danger",
};

/** An effect's status as a coloured badge; "stuck" for an in-progress claim whose lease ran out. */
export function StatusBadge({ status, stuck }: { status: EffectStatus; stuck?: boolean }) {
  return (
    <span className="badge status-badge" data-tone={stuck ? "danger" : STATUS_TONE[status]} data-testid="status-badge">
      {stuck ? "stuck" : status.replace("_", " ")}
    </span>
  );
}
