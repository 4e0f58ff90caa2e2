import { HOUR, type LiveWorker } from "./maintenance-settings";
import { type PartitionInterval, partitionIntervalSeconds, type RetentionSettingsRow } from "./states";

/**
 * The partition manager's words and its arithmetic over ranges, on either engine: what a plan says
 * (maintenance-plan.ts on PostgreSQL, maintenance-mysql.ts on MySQL and MariaDB), partition names,
 * the slots to premake and the runway. Pure: no query here.
 */

/** The newest partitions (by upper bound) that are never dropped, whatever the settings say. */
export const NEWEST_KEPT = 2;

/** catch-all: MySQL's first timeline partition (p_start), the range below every other; never dropped. */
export type Guard = "retention" | "retry-window" | "in-flight" | "newest" | "current" | "catch-all";

export interface PartitionState {
  name: string;
  from: Date | null;
  to: Date | null;
  detachPending: boolean;
  estimatedRows: number;
  bytes: number;
  /** In-progress claims with a live lease (counted only for partitions old enough to expire). */
  liveClaims: number | null;
  /** Set on every partition: what the manager will do and, when kept, which guard holds it. */
  action: "keep" | "drop" | "finalize";
  guard: Guard | null;
  reason: string;
}

export interface PlannedCreate {
  name: string;
  from: Date;
  to: Date;
  reason: "ahead" | "missing";
}

/**
 * The Keys index (maintenance-sql.ts, TENANT_INDEX_SHAPE) to build on a closed partition: one whose
 * upper bound has passed (no claim inserts there any more) and that is kept.
 */
export interface PlannedIndex {
  partition: string;
  /** The index to build: `<partition>_tenant_created_at_idx`. */
  index: string;
  /** INVALID leftovers of an interrupted build, dropped CONCURRENTLY before the build. */
  invalid: string[];
  reason: string;
}

export interface MaintenancePlan {
  now: Date;
  settings: RetentionSettingsRow;
  liveWorkers: LiveWorker[];
  /** max(retention, largest declared retry window): nothing newer than now − this is dropped. */
  keepSeconds: number;
  /** now − keepSeconds. */
  dropBefore: Date;
  create: PlannedCreate[];
  partitions: PartitionState[];
  /** Tables we detached but did not drop (a crash between the two): dropped by the next run. */
  orphans: string[];
  /** Closed, kept partitions without a valid Keys index: built last, one at a time. */
  index: PlannedIndex[];
  /** Hours from now to the end of the contiguous premade range. */
  runwayHours: number;
}

export const floorTo = (t: number, interval: PartitionInterval): number => {
  if (interval === "hour") return Math.floor(t / HOUR) * HOUR;
  const day = Math.floor(t / (24 * HOUR)) * 24 * HOUR;
  if (interval === "day") return day;
  // Weeks start on Monday (ISO); 1970-01-01 was a Thursday.
  const weekday = (new Date(day).getUTCDay() + 6) % 7;
  return day - weekday * 24 * HOUR;
};

const pad = (n: number) => String(n).padStart(2, "0");

/** effects_pYYYYMMDD for a UTC day (as the startup premake names it), _HH for hours, w for weeks. */
export function partitionName(from: Date, to: Date): string {
  const ymd = `${from.getUTCFullYear()}${pad(from.getUTCMonth() + 1)}${pad(from.getUTCDate())}`;
  const length = to.getTime() - from.getTime();
  const midnight = from.getTime() % (24 * HOUR) === 0;
  if (midnight && length === 24 * HOUR) return `effects_p${ymd}`;
  if (midnight && length === 7 * 24 * HOUR) return `effects_w${ymd}`;
  if (from.getTime() % HOUR === 0 && length === HOUR) return `effects_p${ymd}_${pad(from.getUTCHours())}`;
  return `effects_p${ymd}_${pad(from.getUTCHours())}${pad(from.getUTCMinutes())}`;
}

export interface PartitionRow {
  name: string;
  detach_pending: boolean;
  range_from: Date | null;
  range_to: Date | null;
  estimated_rows: number;
  bytes: number;
  comment: string;
}

/** The premade slots from one interval back to premakeCount ahead, minus what existing partitions cover. */
export function missingRanges(now: Date, settings: RetentionSettingsRow, existing: PartitionRow[]): PlannedCreate[] {
  const step = partitionIntervalSeconds(settings.interval) * 1000;
  const start = floorTo(now.getTime(), settings.interval);
  const covered = existing
    .filter((p) => p.range_from && p.range_to)
    .map((p) => [(p.range_from as Date).getTime(), (p.range_to as Date).getTime()] as const)
    .sort((a, b) => a[0] - b[0]);
  const lastCovered = covered.reduce((max, [, hi]) => Math.max(max, hi), Number.NEGATIVE_INFINITY);
  const out: PlannedCreate[] = [];
  for (let k = -1; k <= settings.premakeCount; k++) {
    let lo = start + k * step;
    const hi = lo + step;
    // Subtract the covered ranges from [lo, hi): what is left are the pieces to create.
    for (const [a, b] of covered) {
      if (b <= lo || a >= hi) continue;
      if (a > lo) {
        out.push({ name: "", from: new Date(lo), to: new Date(a), reason: lo < lastCovered ? "missing" : "ahead" });
      }
      lo = Math.max(lo, b);
      if (lo >= hi) break;
    }
    if (lo < hi) out.push({ name: "", from: new Date(lo), to: new Date(hi), reason: lo < lastCovered ? "missing" : "ahead" });
  }
  return out.map((c) => ({ ...c, name: partitionName(c.from, c.to) }));
}

/** Hours from now to the end of the contiguous range of attached partitions that starts at now. */
export function runwayHours(now: Date, rows: PartitionRow[]): number {
  const ranges = rows
    .filter((p) => !p.detach_pending && p.range_from && p.range_to)
    .map((p) => [(p.range_from as Date).getTime(), (p.range_to as Date).getTime()] as const)
    .sort((a, b) => a[0] - b[0]);
  let end = now.getTime();
  let found = false;
  for (const [a, b] of ranges) {
    if (a <= end && b > end) {
      end = b;
      found = true;
    }
  }
  return found ? (end - now.getTime()) / HOUR : 0;
}

export function fmtSeconds(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400}d`;
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  return `${Math.round(seconds)}s`;
}
