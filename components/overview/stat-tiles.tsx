import type { Overview } from "@/lib/console/overview-types";
import { formatCount, formatPercent } from "./format";

type Tone = "neutral" | "success" | "info" | "danger" | "warning" | "accent";

interface Tile {
  id: string;
  label: string;
  value: number;
  tone: Tone;
  note?: string;
}

/** The window's headline numbers. Each tile is a dt/dd pair, so screen readers read "label: value". */
export function StatTiles({ totals }: { totals: Overview["totals"] }) {
  const deliveries = totals.claims + totals.duplicateSuppressions;
  const tiles: Tile[] = [
    { id: "effects", label: "Effects", value: totals.effects, tone: "neutral", note: "created in window" },
    { id: "completed", label: "Completed", value: totals.completed, tone: "success" },
    {
      id: "in-progress",
      label: "In progress",
      value: totals.in_progress,
      tone: totals.stuck > 0 ? "warning" : "info",
      note: totals.stuck > 0 ? `${formatCount(totals.stuck)} stuck (lease expired)` : "none stuck",
    },
    { id: "failed", label: "Failed", value: totals.failed, tone: totals.failed > 0 ? "danger" : "neutral" },
    { id: "abandoned", label: "Abandoned", value: totals.abandoned, tone: totals.abandoned > 0 ? "warning" : "neutral" },
    { id: "claims", label: "Claims", value: totals.claims, tone: "neutral", note: "first deliveries" },
    {
      id: "suppressions",
      label: "Duplicate suppressions",
      value: totals.duplicateSuppressions,
      tone: "accent",
      note: deliveries > 0 ? `${formatPercent(totals.duplicateSuppressions / deliveries)} of deliveries` : undefined,
    },
    {
      id: "uncaught",
      label: "Uncaught violations",
      value: totals.uncaughtViolations,
      tone: totals.uncaughtViolations > 0 ? "danger" : "success",
      note: totals.uncaughtViolations > 0 ? "guard bugs: investigate" : "none",
    },
  ];
  return (
    <dl className="stat-grid">
      {tiles.map((tile) => (
        <div className="stat" data-tone={tile.tone} data-testid={`stat-${tile.id}`} key={tile.id}>
          <dt>{tile.label}</dt>
          <dd>
            <span className="stat-value">{formatCount(tile.value)}</span>
            {tile.note ? <span className="stat-note">{tile.note}</span> : null}
          </dd>
        </div>
      ))}
    </dl>
  );
}
