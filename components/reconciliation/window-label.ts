import { formatUtc, formatUtcDay } from "@/lib/format";

/**
 * A reconciled window in one line: "2026-12-03 17:40 → 18:40 UTC" within a day, both dates when it
 * spans days ("2026-12-02 00:00 → 2026-12-03 00:00 UTC").
 */
export function formatWindow(from: string, to: string): string {
  const start = formatUtc(from, { seconds: false }).replace(/ UTC$/, "");
  const end = formatUtc(to, { seconds: false });
  return formatUtcDay(from) === formatUtcDay(to) ? `${start} → ${end.slice(11)}` : `${start} → ${end}`;
}
