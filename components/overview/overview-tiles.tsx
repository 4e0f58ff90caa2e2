import type { OverviewResponse } from "@/lib/console/overview-types";
import { formatCount } from "@/lib/format";

/** The range's totals as tiles; violations and stuck claims tinted when not zero. */
export function OverviewTiles({ data }: { data: OverviewResponse }) {
  const t = data.totals;
  const tiles: [string, string, number, string | undefined][] = [
    ["deliveries", "Deliveries", t.deliveries, undefined],
    ["redeliveries", "Redeliveries", t.redeliveries, undefined],
    ["claims", "Claims", t.claims, undefined],
    ["suppressions", "Duplicates suppressed", t.suppressions, undefined],
    ["uncaught", "Uncaught violations", t.uncaughtViolations, t.uncaughtViolations > 0 ? "danger" : undefined],
    ["stuck", "Stuck claims (now)", t.stuck, t.stuck > 0 ? "warning" : undefined],
  ];
  return (
    <div className="stat-grid" data-testid="tiles">
      {tiles.map(([id, label, value, tone]) => (
        <div className="stat" key={id} data-tone={tone} data-testid={`stat-${id}`}>
          <span className="stat-label">{label}</span>
          <span className="stat-value">{formatCount(Math.round(value))}</span>
        </div>
      ))}
    </div>
  );
}
