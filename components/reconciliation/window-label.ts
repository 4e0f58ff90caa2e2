import { formatUtc, formatUtcDay } from "@/lib/format";

/**
 * A reconciled window's two ends: ["2026-12-03 17:40", "18:40 UTC"] within a day, both dates when
 * it spans days (["2026-12-02 00:00", "2026-12-03 00:00 UTC"]).
 */
export function windowEnds(from: string, to: string): [string, string] {
  const start = formatUtc(from, { seconds: false }).replace(/ UTC$/, "");
  const end = formatUtc(to, { seconds: false });
  return [start, formatUtcDay(from) === formatUtcDay(to) ? end.slice(11) : end];
}

/** A reconciled window in one line: "2026-12-03 17:40 → 18:40 UTC". */
export function formatWindow(from: string, to: string): string {
  const [start, end] = windowEnds(from, to);
  return `${start} → ${end}`;
}
