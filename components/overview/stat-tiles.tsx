import type { Overview } from "@/lib/console/overview-types";
import { formatCount, formatPercent } from "./format";

type Tone = "neutral" | "success" | "info" | "danger" | "warning" | "accent";

interface Tile {
  id: string;
  label: string;
  value: number;
  tone: Tone;
  note?: string;
  /** The longer explanation, on hover. */
  title?: string;
}

/** The window's headline numbers. Each tile is a dt/dd pair, so screen readers read "label: value". */
export function StatTiles({ totals }: { totals: Overview["totals"] }) {
  const deliveries = totals.claims + totals.duplicateSuppressions;
  const tiles: Tile[] = [
    { id: "effects", label: "Effects", value: totals.effects, tone: "neutral", note: "in window" },
    {
      id: "completed",
      label: "Completed",
      value: totals.completed,
      tone: "success",
      note: totals.effects > 0 ? `${formatPercent(totals.completed / totals.effects)} of effects` : undefined,
    },
    {
      id: "in-progress",
      label: "In progress",
      value: totals.in_progress,
      tone: totals.stuck > 0 ? "warning" : "info",
      title: "Stuck: in progress with an expired lease (a worker died holding the claim)",
      note: totals.stuck > 0 ? `${formatCount(totals.stuck)} stuck` : "none stuck",
    },
    { id: "failed", label: "Failed", value: totals.failed, tone: totals.failed > 0 ? "danger" : "neutral", note: "step raised" },
    {
      id: "abandoned",
      label: "Abandoned",
      value: totals.abandoned,
      tone: totals.abandoned > 0 ? "warning" : "neutral",
      note: "skipped",
      title: "Abandoned: an at-most-once step whose claim was taken over after a crash, marked abandoned and skipped",
    },
    { id: "claims", label: "Claims", value: totals.claims, tone: "neutral", note: "effects claimed" },
    {
      id: "suppressions",
      label: "Suppressed",
      value: totals.duplicateSuppressions,
      tone: "accent",
      note: deliveries > 0 ? `${formatPercent(totals.duplicateSuppressions / deliveries)} rate` : "duplicates",
      title: "Duplicate deliveries suppressed: the share of all deliveries that were duplicates",
    },
    {
      id: "uncaught",
      label: "Uncaught",
      value: totals.uncaughtViolations,
      tone: totals.uncaughtViolations > 0 ? "danger" : "success",
      note: "guard misses",
      title: "Unique violations raised by handlers' own writes, not caught as duplicates: each is a bug in a guard",
    },
  ];
  return (
    <dl className="stat-grid">
      {tiles.map((tile) => (
        <div className="stat" data-tone={tile.tone} data-testid={`stat-${tile.id}`} key={tile.id} title={tile.title}>
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
