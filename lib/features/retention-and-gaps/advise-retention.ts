import { loadConfig } from "../../config";
import { byEngine, type EffectsSource } from "../../console/effects-store";
import { formatCountOf, formatDuration } from "../../format";
import { isEffectsDistributed, type LiveWorker } from "../../idempotency/admin";
import { DEFAULT_RETENTION_SETTINGS, type PartitionInterval, partitionIntervalSeconds } from "../../idempotency/states";
import { reconcileProviders } from "../../reconciliation/providers";
import { ADVICE_DEFAULTS, type AdviceBasis, BASIS_QUANTILE } from "./advice-types";
import type { Advice, JobTypeAdvice, ProviderWindowAdvice, Refusal, RetentionComparison } from "./contract";
import { countBeyond, GAP_BOUNDS, maxBounds, quantile, total } from "./gap-histogram";
import { loadGapHistograms } from "./load-gap-histograms";
import { readStoreLiveWorkers, readStoreRetentionSettings } from "./store-settings";

const DAY = 86_400;

interface AdviceJobType {
  jobType: string;
  /** Counts per bucket of GAP_BOUNDS, then the open-ended bucket. */
  buckets: number[];
  claimsBeyondRetention?: number;
}

export interface AdviseInput {
  from: Date;
  to: Date;
  jobTypes: AdviceJobType[];
  retentionSeconds: number;
  maxRetryWindowSeconds: number;
  maxRetryWindowSource: string;
  /**
   * The largest per-effect gap (effects.max_gap_seconds) in the window of each job type, exact
   * (readEffectsMaxGaps). A job type absent here falls back to its histogram's bucket bounds.
   */
  effectsMaxGaps?: EffectsMaxGap[];
  basis?: AdviceBasis;
  safetyFactor?: number;
  deadLetterDwellSeconds?: number;
  minSamples?: number;
  partitionSeconds?: number;
  /** The providers the job types call and how long each dedupes a key itself (reconcileProviders()). */
  providerWindows?: ProviderKeyWindow[];
}

/** One job type's largest per-effect gap among the effects still kept, and where it was seen. */
export interface EffectsMaxGap {
  seconds: number;
  jobType: string;
  tenant: string;
  key: string;
}

/**
 * What is known of a job type's longest gap: exact when a kept effect shows a gap beyond the
 * histogram's highest bucket's lower bound (the histogram outlives the effects, so a shorter
 * effect maximum means the longest gap's effect was pruned; a longer one, that a worker died
 * before flushing its rollup), else the bucket's bounds. Every figure of the advice (the cap on
 * each percentile, the comparison, its sentences) reads this, and nothing else, so they agree.
 */
export function longestGap(
  buckets: readonly number[],
  exact: EffectsMaxGap | undefined,
): { atLeast: number; atMost: number; exact: EffectsMaxGap | null } | null {
  const m = maxBounds(buckets);
  if (exact && (!m || exact.seconds > m.atLeast)) return { atLeast: exact.seconds, atMost: exact.seconds, exact };
  return m ? { atLeast: m.atLeast, atMost: m.atMost, exact: null } : null;
}

interface ProviderKeyWindow {
  name: string;
  label: string;
  /** Null: the provider does not dedupe at all (nothing to compare). */
  keyWindowSeconds: number | null;
  jobTypes: string[];
}

/**
 * Per provider with a key window: the observed redeliveries of its job types that arrived after
 * the window, i.e. the ones the provider would have run again and Onceboard's own record stopped.
 */
function providerWindowAdvice(jobTypes: AdviceJobType[], providers: ProviderKeyWindow[]): ProviderWindowAdvice[] {
  return providers.flatMap((p) => {
    if (p.keyWindowSeconds === null) return [];
    const window = p.keyWindowSeconds;
    const held = jobTypes.filter((j) => p.jobTypes.includes(j.jobType));
    let atLeast = 0;
    let upTo = 0;
    for (const j of held) {
      const c = countBeyond(j.buckets, window);
      atLeast += c.atLeast;
      upTo += c.upTo;
    }
    const names = held.map((j) => j.jobType);
    const message =
      held.length === 0
        ? `${p.label} keeps an idempotency key for ${formatDuration(window)}; no redelivery of its job types (${p.jobTypes.join(", ")}) was observed in the window.`
        : upTo === 0
          ? `${p.label} keeps an idempotency key for ${formatDuration(window)}: every observed redelivery of ${names.join(", ")} came within it.`
          : `${p.label} keeps an idempotency key for ${formatDuration(window)}: ${formatCountOf(atLeast, "redelivery", "redeliveries")} of ${names.join(", ")} arrived later${upTo > atLeast ? ` (up to ${upTo})` : ""}; ${p.label} would have run ${atLeast === 1 ? "it" : "them"} again, and only Onceboard's own record stopped ${atLeast === 1 ? "it" : "them"}. The retention must keep those records.`;
    return [
      {
        provider: p.name,
        label: p.label,
        keyWindowSeconds: window,
        jobTypes: names,
        afterWindow: atLeast,
        afterWindowUpTo: upTo,
        message,
      },
    ];
  });
}

/**
 * The retention advisor (pure). Recommended retention = the largest, over job types, of (the
 * chosen percentile, or the observed maximum) × safetyFactor + the dead-letter dwell, rounded up
 * to whole partitions, never below the largest declared retry window. Refuses, with reasons, when
 * the data cannot support it: no gaps at all, too few samples, or gaps in the open-ended top
 * bucket (the real gap is unknown). Compares the current retention with the observed maximum.
 */
export function adviseRetention(input: AdviseInput): Advice {
  const basis = input.basis ?? ADVICE_DEFAULTS.basis;
  const safetyFactor = input.safetyFactor ?? ADVICE_DEFAULTS.safetyFactor;
  const dwell = input.deadLetterDwellSeconds ?? ADVICE_DEFAULTS.deadLetterDwellSeconds;
  const minSamples = input.minSamples ?? ADVICE_DEFAULTS.minSamples;
  const partitionSeconds = input.partitionSeconds ?? DAY;
  const refusals: Refusal[] = [];
  const reasons: string[] = [];

  const withData = input.jobTypes.filter((j) => total(j.buckets) > 0);
  const maxGapOf = new Map((input.effectsMaxGaps ?? []).map((g) => [g.jobType, g]));
  const samples = withData.reduce((s, j) => s + total(j.buckets), 0);
  if (withData.length === 0) {
    refusals.push({ code: "NO_DATA", jobType: null, message: "no redelivery gaps were observed in the window" });
  } else if (samples < minSamples) {
    refusals.push({
      code: "TOO_FEW_SAMPLES",
      jobType: null,
      message: `too few samples: ${formatCountOf(samples, "gap")} observed in the window, at least ${minSamples} are needed for ${basis}`,
    });
  }

  const jobTypes: JobTypeAdvice[] = withData.map((j) => {
    const n = total(j.buckets);
    const overflow = j.buckets[GAP_BOUNDS.length] ?? 0;
    if (overflow > 0) {
      refusals.push({
        code: "OPEN_ENDED_BUCKET",
        jobType: j.jobType,
        message: `${j.jobType}: ${formatCountOf(overflow, "gap")} longer than ${formatDuration(GAP_BOUNDS.at(-1))} (the open-ended top bucket): the real gap is unknown`,
      });
    }
    // A percentile needs enough samples in this job type too; below that, its observed maximum
    // (the upper bound of its highest bucket, conservative) stands in for it.
    let basisUsed: AdviceBasis = basis;
    let note: string | null = null;
    if (basis !== "max" && n < minSamples) {
      basisUsed = "max";
      note = `${n} samples: too few for ${basis}, its observed maximum is used`;
    }
    const longest = longestGap(j.buckets, maxGapOf.get(j.jobType));
    const observedMax = longest ? (Number.isFinite(longest.atMost) ? longest.atMost : longest.atLeast) : null;
    let basisSeconds: number | null;
    if (basisUsed === "max") {
      basisSeconds = observedMax;
    } else {
      basisSeconds = quantile(j.buckets, BASIS_QUANTILE[basisUsed as keyof typeof BASIS_QUANTILE])?.seconds ?? null;
      // Interpolating inside the highest bucket can land above every gap that happened: a
      // percentile never exceeds the observed maximum.
      if (basisSeconds !== null && observedMax !== null && basisSeconds > observedMax) {
        // Only an exact maximum can be below the interpolation (a bucket's bound never is).
        const m = maxBounds(j.buckets);
        note = `${basisUsed} interpolated to ${formatDuration(basisSeconds)}${m ? ` inside the ${formatDuration(m.atLeast)}–${formatDuration(m.atMost)} bucket` : ""}, above the observed maximum: capped at ${formatDuration(observedMax)}`;
        basisSeconds = observedMax;
      }
    }
    return {
      jobType: j.jobType,
      samples: n,
      overflow,
      basisUsed,
      basisSeconds,
      candidateSeconds: basisSeconds === null ? null : basisSeconds * safetyFactor + dwell,
      maxSeconds: longest && Number.isFinite(longest.atMost) ? longest.atMost : null,
      maxExact: longest?.exact !== null && longest?.exact !== undefined,
      note,
    };
  });

  let recommendedSeconds: number | null = null;
  let decidedBy: string | null = null;
  if (refusals.length === 0) {
    let best = -1;
    for (const j of jobTypes) {
      if (j.candidateSeconds !== null && j.candidateSeconds > best) {
        best = j.candidateSeconds;
        decidedBy = j.jobType;
      }
    }
    const decider = jobTypes.find((j) => j.jobType === decidedBy);
    for (const j of jobTypes) if (j.note) reasons.push(`${j.jobType}: ${j.note}`);
    if (decider) {
      reasons.push(
        `${decider.jobType} decides: ${decider.basisUsed} ${formatDuration(decider.basisSeconds)} × ${safetyFactor}${dwell > 0 ? ` + ${formatDuration(dwell)} dead-letter dwell` : ""} = ${formatDuration(decider.candidateSeconds)}`,
      );
    }
    const roundUp = (s: number) => Math.ceil(s / partitionSeconds - 1e-9) * partitionSeconds;
    recommendedSeconds = roundUp(Math.max(best, 0));
    reasons.push(`rounded up to whole ${formatDuration(partitionSeconds)} partitions: ${formatDuration(recommendedSeconds)}`);
    if (recommendedSeconds < input.maxRetryWindowSeconds) {
      recommendedSeconds = roundUp(input.maxRetryWindowSeconds);
      decidedBy = "retry window";
      reasons.push(
        `raised to the largest declared retry window (${formatDuration(input.maxRetryWindowSeconds)}, from ${input.maxRetryWindowSource}): ${formatDuration(recommendedSeconds)}`,
      );
    }
  } else {
    for (const r of refusals) reasons.push(`no recommendation: ${r.message}`);
  }

  return {
    status: refusals.length === 0 ? "recommended" : "refused",
    recommendedSeconds,
    decidedBy,
    refusals,
    reasons,
    jobTypes,
    comparison: compare(input, maxGapOf, recommendedSeconds),
    providers: providerWindowAdvice(input.jobTypes, input.providerWindows ?? []),
    inputs: {
      from: input.from.toISOString(),
      to: input.to.toISOString(),
      basis,
      safetyFactor,
      deadLetterDwellSeconds: dwell,
      minSamples,
      partitionSeconds,
      retentionSeconds: input.retentionSeconds,
      maxRetryWindowSeconds: input.maxRetryWindowSeconds,
      maxRetryWindowSource: input.maxRetryWindowSource,
      bounds: [...GAP_BOUNDS],
    },
  };
}

function compare(
  input: AdviseInput,
  maxGapOf: Map<string, EffectsMaxGap>,
  recommendedSeconds: number | null,
): RetentionComparison {
  const retention = input.retentionSeconds;
  // The longest gap known to have happened (atLeast: exact, or a bucket's exclusive lower bound),
  // and how long it may be (atMost), over job types, from longestGap like the recommendation's caps.
  let known: { seconds: number; exact: boolean; source: string } | null = null;
  let upTo: number | null = 0;
  let late = 0;
  let lateUpTo = 0;
  let beyond = 0;
  for (const j of input.jobTypes) {
    const g = longestGap(j.buckets, maxGapOf.get(j.jobType));
    if (
      g &&
      g.atLeast > 0 &&
      (known === null || g.atLeast > known.seconds || (g.atLeast === known.seconds && g.exact && !known.exact))
    )
      known = {
        seconds: g.atLeast,
        exact: g.exact !== null,
        source: g.exact
          ? `${j.jobType}: effect ${g.exact.key} of tenant ${g.exact.tenant} saw a duplicate ${formatDuration(g.exact.seconds)} after its first claim`
          : `${j.jobType}: a redelivery gap longer than ${formatDuration(g.atLeast)} (rollup histogram; no effect still kept shows it)`,
      };
    if (g) upTo = upTo === null || !Number.isFinite(g.atMost) ? null : Math.max(upTo, g.atMost);
    const c = countBeyond(j.buckets, retention);
    late += c.atLeast;
    lateUpTo += c.upTo;
    beyond += j.claimsBeyondRetention ?? 0;
  }
  if (known === null) upTo = null;
  // A bucket's lower bound is exclusive: a gap in (3 d, 7 d] is longer than 3 d, so a 3-day retention is short.
  const belowObservedMax = known !== null && (retention < known.seconds || (!known.exact && retention === known.seconds));
  const verdict = belowObservedMax
    ? "below_observed_max"
    : recommendedSeconds !== null && retention < recommendedSeconds
      ? "below_recommendation"
      : "ok";
  const longest = known === null ? "" : `${known.exact ? "" : "more than "}${formatDuration(known.seconds)}`;
  // Whether every gap is known to be within the retention, or only the exact ones (a bucket's upper bound beyond it).
  const covered =
    known === null
      ? "no gap was observed"
      : upTo !== null && upTo <= retention
        ? `covers every observed gap (longest ${longest})`
        : `covers the longest gap known to have happened (${longest}), though a gap may have been as long as ${upTo === null ? "the open-ended top bucket allows" : formatDuration(upTo)} (a histogram bucket; no effect still kept shows it)`;
  const message =
    verdict === "below_observed_max"
      ? `The retention (${formatDuration(retention)}) is shorter than the longest observed gap (${longest}): ${formatCountOf(late, "duplicate")} in the window arrived later than the retention allows${lateUpTo > late ? ` (up to ${lateUpTo})` : ""}; once pruned, each would have run as new work.`
      : verdict === "below_recommendation"
        ? `The retention (${formatDuration(retention)}) ${covered}, but is below the recommendation (${formatDuration(recommendedSeconds)}).`
        : `The retention (${formatDuration(retention)}) ${covered}${recommendedSeconds !== null ? ` and the recommendation (${formatDuration(recommendedSeconds)})` : ""}.`;
  return {
    retentionSeconds: retention,
    observedMaxSeconds: known?.seconds ?? null,
    observedMaxExact: known?.exact ?? false,
    observedMaxUpToSeconds: upTo,
    observedMaxSource: known?.source ?? null,
    belowObservedMax,
    lateDuplicates: late,
    lateDuplicatesUpTo: lateUpTo,
    claimsBeyondRetention: beyond,
    verdict,
    message,
  };
}

// ---------------------------------------------------------------------------------------------
// The loader: reads the inputs from the database.

interface RetentionSettingsRead {
  retentionSeconds: number;
  maxRetryWindowSeconds: number;
  maxRetryWindowSource: string;
  partitionSeconds: number;
}

// The retention_settings row, or its defaults (7 d, 3 d) when there is none: always exactly one
// row, so another statement can carry it as a CTE (the gaps page reads it with its late effects).
// Plain SQL MySQL runs too (where `found` is 0 or 1).
export const RETENTION_SETTINGS_SQL = `
SELECT coalesce(r.retention_days, ${DEFAULT_RETENTION_SETTINGS.retentionSeconds / DAY}) AS retention_days,
       coalesce(r.max_retry_window_days, ${DEFAULT_RETENTION_SETTINGS.maxRetryWindowSeconds / DAY}) AS max_retry_window_days,
       coalesce(r.partition_interval, '${DEFAULT_RETENTION_SETTINGS.interval}') AS partition_interval, r.id IS NOT NULL AS found
  FROM (SELECT 1) AS one LEFT JOIN retention_settings r ON r.id = 1`;

export interface RetentionSettingsRow {
  retention_days: number;
  max_retry_window_days: number;
  /** Absent where a statement carrying the row does not select it: daily then. */
  partition_interval?: PartitionInterval;
  /** A boolean, or MySQL's 0/1. */
  found: boolean | number;
}

export function toRetentionSettings(row: RetentionSettingsRow): RetentionSettingsRead {
  return {
    retentionSeconds: Number(row.retention_days) * DAY,
    maxRetryWindowSeconds: Number(row.max_retry_window_days) * DAY,
    maxRetryWindowSource: row.found ? "retention_settings.max_retry_window_days" : "the default (no retention_settings row)",
    partitionSeconds: partitionIntervalSeconds(row.partition_interval ?? DEFAULT_RETENTION_SETTINGS.interval),
  };
}

/**
 * The current retention, the largest declared retry window and the partition length, read as the
 * partition manager reads them (the library's readers): the retention_settings row (or its
 * defaults) and the live workers' registrations, the largest window of either counting.
 */
export async function readEffectiveRetention(db: EffectsSource, now: Date = new Date()): Promise<RetentionSettingsRead> {
  const [settings, workers] = await Promise.all([readStoreRetentionSettings(db), readStoreLiveWorkers(db, now)]);
  const widest = workers.reduce<LiveWorker | null>(
    (max, w) => (max === null || w.maxRetryWindowSeconds > max.maxRetryWindowSeconds ? w : max),
    null,
  );
  const fromWorker = widest !== null && widest.maxRetryWindowSeconds > settings.maxRetryWindowSeconds;
  return {
    retentionSeconds: settings.retentionSeconds,
    maxRetryWindowSeconds: fromWorker ? widest.maxRetryWindowSeconds : settings.maxRetryWindowSeconds,
    maxRetryWindowSource: fromWorker
      ? `the registration of live worker ${widest.workerId}${widest.host ? ` (${widest.host}${widest.pid ? `:${widest.pid}` : ""})` : ""}`
      : "retention_settings.max_retry_window_days (or its default)",
    partitionSeconds: partitionIntervalSeconds(settings.interval),
  };
}

// The exact largest per-effect gap of each job type among effects created in the window
// (created_at prunes to the window's partitions): per job type, one backward walk of the partial
// index effects_max_gap_seconds_idx until a row of that job type (job types are few).
// Params: $1 from, $2 to, $3 job types, $4 tenant or null.
const EFFECTS_MAX_GAPS_SQL = `
SELECT m.tenant_id, m.key, j.job_type, m.max_gap_seconds
  FROM unnest($3::text[]) AS j(job_type)
  CROSS JOIN LATERAL (
    SELECT tenant_id, key, max_gap_seconds
      FROM effects
     WHERE created_at >= $1 AND created_at <= $2 AND max_gap_seconds IS NOT NULL AND job_type = j.job_type
       AND ($4::text IS NULL OR tenant_id = $4::text)
     ORDER BY max_gap_seconds DESC
     LIMIT 1) m
 ORDER BY j.job_type`;

// The same on Citus, where the correlated LIMIT above cannot be pushed down to the shards ("cannot
// push down this subquery"): each shard keeps its largest gap per job type (DISTINCT ON), the
// coordinator the largest of those. One server keeps the statement above: it reads one index entry
// per job type, where this one sorts every gap of the window.
const EFFECTS_MAX_GAPS_CITUS_SQL = `
SELECT DISTINCT ON (job_type) tenant_id, key, job_type, max_gap_seconds
  FROM effects
 WHERE created_at >= $1 AND created_at <= $2 AND max_gap_seconds IS NOT NULL AND job_type = ANY($3::text[])
   AND ($4::text IS NULL OR tenant_id = $4::text)
 ORDER BY job_type, max_gap_seconds DESC`;

// The same on MySQL (effects unpartitioned, one index on max_gap_seconds): each job type's first
// row by gap, ties broken by tenant and key. Params: from, to, job types, tenant (twice).
const EFFECTS_MAX_GAPS_MYSQL = `
SELECT tenant_id, \`key\`, job_type, max_gap_seconds FROM (
  SELECT tenant_id, \`key\`, job_type, max_gap_seconds,
         ROW_NUMBER() OVER (PARTITION BY job_type ORDER BY max_gap_seconds DESC, tenant_id, \`key\`) AS place
    FROM effects
   WHERE created_at >= ? AND created_at <= ? AND max_gap_seconds IS NOT NULL AND job_type IN (?)
     AND (? IS NULL OR tenant_id = ?)) m
 WHERE place = 1
 ORDER BY job_type`;

/** Each job type's exact largest per-effect gap in the window (of one tenant, or every tenant). */
export async function readEffectsMaxGaps(
  source: EffectsSource,
  input: { from: Date; to: Date; jobTypes: string[]; tenant?: string | null },
): Promise<EffectsMaxGap[]> {
  if (input.jobTypes.length === 0) return [];
  type Row = { tenant_id: string; key: string; job_type: string; max_gap_seconds: number };
  const tenant = input.tenant ?? null;
  const rows = await byEngine(source, {
    postgres: async (db) => {
      const citus = await isEffectsDistributed(db, loadConfig().ONCEBOARD_SCHEMA);
      return (
        await db.query<Row>(citus ? EFFECTS_MAX_GAPS_CITUS_SQL : EFFECTS_MAX_GAPS_SQL, [
          input.from.toISOString(),
          input.to.toISOString(),
          input.jobTypes,
          tenant,
        ])
      ).rows;
    },
    mysql: (db) => db.query<Row>(EFFECTS_MAX_GAPS_MYSQL, [input.from, input.to, input.jobTypes, tenant, tenant]),
  });
  return rows.map((r) => ({ seconds: Number(r.max_gap_seconds), jobType: r.job_type, tenant: r.tenant_id, key: r.key }));
}

/** The largest of them (the page's "longest gap" line), or null. */
export const largestOf = (gaps: EffectsMaxGap[]): EffectsMaxGap | null =>
  gaps.reduce<EffectsMaxGap | null>((a, g) => (a === null || g.seconds > a.seconds ? g : a), null);

export interface GetAdviceOptions {
  now?: Date;
  windowDays?: number;
  jobType?: string | null;
  basis?: AdviceBasis;
  safetyFactor?: number;
  deadLetterDwellSeconds?: number;
  minSamples?: number;
}

/** Loads the inputs (rollups, effects, settings) and runs the advisor. */
export async function getRetentionAdvice(db: EffectsSource, options: GetAdviceOptions = {}): Promise<Advice> {
  const to = options.now ?? new Date();
  const from = new Date(to.getTime() - (options.windowDays ?? ADVICE_DEFAULTS.windowDays) * DAY * 1000);
  const [histograms, settings] = await Promise.all([
    loadGapHistograms(db, { from, to, jobType: options.jobType }),
    readEffectiveRetention(db, to),
  ]);
  const effectsMaxGaps = await readEffectsMaxGaps(db, { from, to, jobTypes: [...histograms.byJobType.keys()] });
  return adviseRetention({
    from,
    to,
    jobTypes: [...histograms.byJobType].map(([jobType, h]) => ({ jobType, ...h })),
    ...settings,
    effectsMaxGaps,
    basis: options.basis,
    safetyFactor: options.safetyFactor,
    deadLetterDwellSeconds: options.deadLetterDwellSeconds,
    minSamples: options.minSamples,
    providerWindows: reconcileProviders(loadConfig()),
  });
}
