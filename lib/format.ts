/**
 * How the console writes numbers, times and durations for people: one module, so every page shows
 * one date style ("2026-12-01 20:08:30 UTC") and English plurals come from Intl.PluralRules. Pure
 * (no server imports), so components import it as well as the read models.
 */

const LOCALE = "en-US";
const integer = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 0 });
const plurals = new Intl.PluralRules(LOCALE);
const utcParts = new Intl.DateTimeFormat(LOCALE, {
  timeZone: "UTC",
  year: "numeric",
  month: "2-digit",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hourCycle: "h23",
});

type Instant = string | number | Date;

function parts(at: Instant): Record<string, string> | undefined {
  const date = at instanceof Date ? at : new Date(at);
  if (Number.isNaN(date.getTime())) return undefined;
  return Object.fromEntries(utcParts.formatToParts(date).map((p) => [p.type, p.value]));
}

/** "2026-12-01 20:08:30 UTC" (or without seconds); `empty` for null, undefined or an invalid time. */
export function formatUtc(at: Instant | null | undefined, options: { seconds?: boolean; empty?: string } = {}): string {
  const p = at === null || at === undefined ? undefined : parts(at);
  if (!p) return options.empty ?? "—";
  const time = options.seconds === false ? `${p.hour}:${p.minute}` : `${p.hour}:${p.minute}:${p.second}`;
  return `${p.year}-${p.month}-${p.day} ${time} UTC`;
}

/** "2026-12-01": a UTC calendar day (chart ticks, partition names). */
export function formatUtcDay(at: Instant): string {
  const p = parts(at);
  return p ? `${p.year}-${p.month}-${p.day}` : "—";
}

/** "20:08:30 UTC": a time of today, as refresh stamps show it. */
export function formatUtcClock(at: Instant): string {
  const p = parts(at);
  return p ? `${p.hour}:${p.minute}:${p.second} UTC` : "—";
}

/** "14:05", or "12-01 14:05" when a chart spans days: a time axis's tick, in UTC like every other time. */
export function formatUtcTick(at: Instant, options: { withDate?: boolean } = {}): string {
  const p = parts(at);
  if (!p) return "—";
  return options.withDate ? `${p.month}-${p.day} ${p.hour}:${p.minute}` : `${p.hour}:${p.minute}`;
}

/** "12,345". */
export const formatCount = (n: number) => integer.format(n);

const compact = new Intl.NumberFormat(LOCALE, { notation: "compact", maximumSignificantDigits: 3 });

/** "950", "1K", "12.5K", "3M": a count on a chart's axis, where a tick has little room. */
export const formatCompactCount = (n: number) => compact.format(n);

/** "1 key", "2 keys", "1 entry" / "3 entries" (give `many` when adding "s" is wrong). */
export function formatCountOf(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${plurals.select(n) === "one" ? one : many}`;
}

const measure = new Intl.NumberFormat(LOCALE, { maximumSignificantDigits: 3 });

/** A chart value or tick: whole numbers as counts; fractions to 3 significant digits, so 0.0025 and 0.005 stay apart (toFixed(2) printed both as 0.00). */
export const formatMeasure = (v: number) => (Number.isInteger(v) ? formatCount(v) : measure.format(v));

const UNITS: ReadonlyArray<readonly [seconds: number, unit: string]> = [
  [86_400, "d"],
  [3600, "h"],
  [60, "min"],
];
const SECONDS = [1, "s"] as const;
const significant = new Intl.NumberFormat(LOCALE, { maximumSignificantDigits: 3, useGrouping: false });

/**
 * A duration for people: "45 s", "15 min", "4 h", "3.46 d": the largest unit it reaches, three
 * significant digits (whole numbers from 100 up), or whole units with `whole`. "—" for a missing
 * value, "∞" for an unbounded one.
 */
export function formatDuration(seconds: number | null | undefined, options: { whole?: boolean } = {}): string {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return "—";
  if (!Number.isFinite(seconds)) return "∞";
  const [size, unit] = UNITS.find(([s]) => Math.abs(seconds) >= s) ?? SECONDS;
  const n = seconds / size;
  const shown = options.whole || Math.abs(n) >= 100 ? integer.format(Math.round(n)) : significant.format(n);
  return `${shown} ${unit}`;
}

/** "1.5 GiB", "12 MiB", "8 KiB", "512 B" (binary units, as PostgreSQL's sizes). */
export function formatBytes(bytes: number): string {
  const one = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 1, minimumFractionDigits: 1 });
  if (bytes >= 1024 ** 3) return `${one.format(bytes / 1024 ** 3)} GiB`;
  if (bytes >= 1024 ** 2) return `${one.format(bytes / 1024 ** 2)} MiB`;
  if (bytes >= 1024) return `${formatCount(bytes / 1024)} KiB`;
  return `${formatCount(bytes)} B`;
}

/** "45 s", "17 min", "3 h 12 min", "2 d 5 h": how long something has run, in two whole units past two of the smaller. */
export function formatElapsed(seconds: number): string {
  if (seconds < 120) return `${Math.floor(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return hours < 48 ? `${hours} h ${minutes % 60} min` : `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** "0.4 ms", "12 ms", "2.35 s": how long one call took (a claim), below a second in milliseconds. */
export function formatMilliseconds(ms: number): string {
  if (ms < 1000) return `${significant.format(ms)} ms`;
  return formatDuration(ms / 1000);
}

/** "at once" (under a millisecond), "+45 s", "+3.46 d": the gap since the event before it. */
export function formatGap(seconds: number): string {
  return seconds < 0.001 ? "at once" : `+${formatDuration(seconds)}`;
}
