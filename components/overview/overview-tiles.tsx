import type { OverviewResponse } from "@/lib/features/overview/contract";
import { formatCount } from "@/lib/format";
import { answersForTenant, EVERY_TENANT, withheld } from "./tenant-scope";

/**
 * The range's totals as tiles; violations and stuck claims tinted when not zero. With a tenant
 * filter each tile says whose number it is: the tenant's, or all tenants' where the rollups carry none.
 */
export function OverviewTiles({ data }: { data: OverviewResponse }) {
  const t = data.totals;
  const tiles: [string, string, number | null, string | undefined, string][] = [
    ["deliveries", "Deliveries", t.deliveries, undefined, "totals.deliveries"],
    ["redeliveries", "Redeliveries", t.redeliveries, undefined, "totals.redeliveries"],
    ["claims", "Claims", t.claims, undefined, "totals.claims"],
    ["suppressions", "Duplicates suppressed", t.suppressions, undefined, "totals.suppressions"],
    [
      "uncaught",
      "Uncaught violations",
      t.uncaughtViolations,
      t.uncaughtViolations > 0 ? "danger" : undefined,
      "totals.uncaughtViolations",
    ],
    ["stuck", "Stuck claims (now)", t.stuck, t.stuck > 0 ? "warning" : undefined, "stuck"],
  ];
  return (
    <div className="stat-grid" data-testid="tiles">
      {tiles.map(([id, label, value, tone, part]) => (
        <div className="stat" key={id} data-tone={tone} data-testid={`stat-${id}`}>
          <span className="stat-label">{label}</span>
          <span className="stat-value">{value === null ? "—" : formatCount(Math.round(value))}</span>
          {value === null || withheld(data, part) ? (
            <span className="stat-note" data-testid="stat-scope">
              not shown: every tenant&apos;s only
            </span>
          ) : data.tenant !== null ? (
            <span className="stat-note" data-testid="stat-scope">
              {answersForTenant(data, part) ? data.tenant : EVERY_TENANT}
            </span>
          ) : null}
        </div>
      ))}
    </div>
  );
}
