import type { EffectStatus, Overview } from "@/lib/console/overview-types";
import { formatCount, formatPercent } from "./format";

export const STATUS_LABELS: Record<EffectStatus, string> = {
  completed: "Completed",
  in_progress: "In progress",
  failed: "Failed",
  abandoned: "Abandoned",
};

const ORDER: EffectStatus[] = ["completed", "in_progress", "failed", "abandoned"];

/** One stacked bar of the window's effects by status, with a legend that carries the numbers. */
export function StatusBreakdown({ totals }: { totals: Overview["totals"] }) {
  const total = totals.effects;
  return (
    <section className="panel" aria-labelledby="status-heading">
      <div className="panel-header">
        <h2 id="status-heading">Effects by status</h2>
        <span className="panel-meta">{formatCount(total)} total</span>
      </div>
      <div className="stacked-bar" aria-hidden="true">
        {total > 0 &&
          ORDER.filter((s) => totals[s] > 0).map((status) => (
            <span key={status} className="stacked-segment" data-status={status} style={{ flexGrow: totals[status] }} />
          ))}
      </div>
      <ul className="legend">
        {ORDER.map((status) => (
          <li key={status} data-testid={`status-${status}`}>
            <span className="legend-swatch" data-status={status} aria-hidden="true" />
            <span className="legend-label">{STATUS_LABELS[status]}</span>
            <span className="legend-value">{formatCount(totals[status])}</span>
            <span className="legend-share">{total > 0 ? formatPercent(totals[status] / total) : "–"}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
