const integer = new Intl.NumberFormat("en-US");
const percent = new Intl.NumberFormat("en-US", { style: "percent", maximumFractionDigits: 1 });

export const formatCount = (n: number) => integer.format(n);
const significant = new Intl.NumberFormat("en-US", { maximumSignificantDigits: 3 });
/** A chart value or tick: whole numbers as counts; fractions to 3 significant digits, so 0.0025 and 0.005 stay apart (toFixed(2) printed both as 0.00). */
export const formatMeasure = (v: number) => (Number.isInteger(v) ? integer.format(v) : significant.format(v));
export const formatPercent = (ratio: number) => percent.format(ratio);

/** "3 min ago", measured against the server's clock (the overview's `to`), not the browser's. */
export function formatAgo(iso: string, nowIso: string): string {
  const seconds = Math.max(0, Math.round((Date.parse(nowIso) - Date.parse(iso)) / 1000));
  if (seconds < 60) return "just now";
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.round(hours / 24)} d ago`;
}
