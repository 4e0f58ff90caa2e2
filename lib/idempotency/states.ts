/**
 * The library's words and rules, with no dependency at all: what an effect's status can be, what a
 * delivery's claim answered, the partition intervals, the default settings, and when a claim is
 * stuck or releasable. The console imports this module (`@onceboard/idempotency/states`), in the
 * browser too, instead of keeping copies; the library's own statements use the same words.
 */

/** effects.status (the table's CHECK lists exactly these). */
export const EFFECT_STATUSES = ["in_progress", "completed", "failed", "abandoned"] as const;
export type EffectStatus = (typeof EFFECT_STATUSES)[number];

/** A status as an SQL literal, checked against the vocabulary: statements never spell one by hand. */
export function statusSql(status: EffectStatus): string {
  return `'${status}'`;
}

/**
 * What one delivery's claim answered, as the key's timeline shows it (delivery_timeline.answer's
 * CHECK): the claim's own result, except that a duplicate that first found the effect in flight and
 * waited for its outcome is `waited`, and a delivery refused as older than the retention is
 * `beyond_retention`.
 */
export const TIMELINE_ANSWERS = [
  "claimed",
  "duplicate",
  "waited",
  "in_flight",
  "takeover",
  "retry",
  "abandoned",
  "key_reuse",
  "beyond_retention",
] as const;
export type TimelineAnswer = (typeof TIMELINE_ANSWERS)[number];

/** How long one partition of effects spans (retention_settings.partition_interval's CHECK). */
export const PARTITION_INTERVALS = ["hour", "day", "week"] as const;
export type PartitionInterval = (typeof PARTITION_INTERVALS)[number];

const HOUR_SECONDS = 3_600;
/** One day, in seconds: the unit retention_settings keeps its windows in. */
export const DAY_SECONDS = 86_400;

/** The length of one partition of `interval`, in seconds. */
export function partitionIntervalSeconds(interval: PartitionInterval): number {
  return interval === "hour" ? HOUR_SECONDS : interval === "day" ? DAY_SECONDS : 7 * DAY_SECONDS;
}

/** The retention settings, as the partition manager reads them. */
export interface RetentionSettingsRow {
  retentionSeconds: number;
  /** The fleet-wide declared retry window of the settings row. */
  maxRetryWindowSeconds: number;
  interval: PartitionInterval;
  premakeCount: number;
}

/**
 * What applies while retention_settings has no row: a week of effects, a three-day retry window,
 * daily partitions, seven made ahead. The table's column defaults are the same (migration 0001).
 */
export const DEFAULT_RETENTION_SETTINGS: Readonly<RetentionSettingsRow> = Object.freeze({
  retentionSeconds: 7 * DAY_SECONDS,
  maxRetryWindowSeconds: 3 * DAY_SECONDS,
  interval: "day",
  premakeCount: 7,
});

/** Upper bounds (seconds) of the claim-duration histogram, and of the Overview's latency rollups. */
export const CLAIM_DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

/** What the stuck and releasable rules read of an effect. */
export interface EffectLease {
  status: string;
  leaseUntil: Date | null;
  policy?: string | null;
}

/**
 * Stuck: in progress with its lease run out (`lease_until <= now`), the very state in which the
 * next claim takes it over (onceboard_claim answers in_flight only while `lease_until > now`). An
 * at-most-once claim is stuck too: its next delivery will mark it abandoned.
 */
export function isStuck(effect: EffectLease, now: Date): boolean {
  return effect.status === "in_progress" && effect.leaseUntil !== null && effect.leaseUntil.getTime() <= now.getTime();
}

/**
 * Releasable (releaseClaim, without force): stuck and not at most once, which is never released
 * (running it again could repeat its effect; its next delivery abandons it instead).
 */
export function isReleasable(effect: EffectLease, now: Date): boolean {
  return isStuck(effect, now) && effect.policy !== "at_most_once";
}

/**
 * isStuck as an SQL condition on effects: `now` is an SQL expression (a parameter such as `$1`, or
 * `now()`), `alias` the table's alias when the statement joins (e.g. `e.`).
 */
export function stuckSql(now: string, alias = ""): string {
  return `${alias}status = ${statusSql("in_progress")} AND ${alias}lease_until <= ${now}`;
}

/** isReleasable as an SQL condition on effects, as stuckSql. */
export function releasableSql(now: string, alias = ""): string {
  return `${stuckSql(now, alias)} AND ${alias}policy <> 'at_most_once'`;
}
