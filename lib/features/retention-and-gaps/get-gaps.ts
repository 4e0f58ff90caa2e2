import type { Scope } from "../../auth/scope";
import { loadConfig } from "../../config";
import { byEngine, type EffectsSource, effectsStore } from "../../console/effects-store";
import { reconcileProviders } from "../../reconciliation/providers";
import {
  adviseRetention,
  type EffectsMaxGap,
  largestOf,
  longestGap,
  RETENTION_SETTINGS_SQL,
  type RetentionSettingsRow,
  readEffectsMaxGaps,
  toRetentionSettings,
} from "./advise-retention";
import {
  addInto,
  BUCKET_COUNT,
  bucketLower,
  bucketUpper,
  countBeyond,
  emptyHistogram,
  GAP_BOUNDS,
  maxBounds,
  quantile,
  total,
} from "./gap-histogram";
import type { GapDay, GapSeries, GapStats, Gaps, LateDuplicate, TenantGaps } from "./gaps-contract";
import type { GapRange } from "./gaps-types";
import { type GapHistogramDay, loadGapHistograms, summariseDays } from "./load-gap-histograms";

interface GetGapsInput {
  from: Date;
  to: Date;
  range: GapRange | "custom";
  jobType?: string | null;
  /** The tenant asked for: a platform scope narrows to it; a tenant scope reads its own whatever it says. */
  tenant?: string | null;
}

// Per-effect largest gaps, bucketed with the same bounds (one column per bucket, generated from
// GAP_BOUNDS). Reads the effects created in the window (created_at prunes partitions); the
// per-partition unique index (tenant_id, key) narrows to the tenant's rows — see docs/gaps.md.
const effectBucketColumns = Array.from({ length: BUCKET_COUNT }, (_, i) => {
  const lower = bucketLower(i);
  const upper = bucketUpper(i);
  const cond = Number.isFinite(upper)
    ? `max_gap_seconds > ${lower} AND max_gap_seconds <= ${upper}`
    : `max_gap_seconds > ${lower}`;
  return `count(*) FILTER (WHERE ${cond})::float8 AS b${i}`;
}).join(", ");

const EFFECTS_BY_DAY_SQL = `
SELECT job_type, date_trunc('day', last_duplicate_at, 'UTC') AS day, ${effectBucketColumns}, 0::float8 AS beyond
  FROM effects
 WHERE created_at >= $1 AND created_at <= $2 AND max_gap_seconds IS NOT NULL AND last_duplicate_at IS NOT NULL
   AND tenant_id = $3 AND ($4::text IS NULL OR job_type = $4::text)
 GROUP BY job_type, day
 ORDER BY job_type, day`;

// Late effects (largest gap beyond the retry window) in the window: a range on the partial index
// effects_max_gap_seconds_idx in each partition (without it, one pass over the window's effects),
// with a small result. The tenant ranking, the latest late duplicates and the exact largest gap all
// come from it. The retention settings ride along (the threshold is
// theirs): one statement, one snapshot, no round trip before it. The outer row exists even when
// no effect is late (LEFT JOIN … ON true), with NULL effect columns. The threshold is a scalar
// subquery on the settings, not a LATERAL reference: Citus refuses a lateral outer join from a
// coordinator table into distributed effects, and plans this one (each shard's top rows, then the
// join on the coordinator); one server evaluates it once (an InitPlan) and ranges the same index.
interface LateEffect {
  tenant_id: string;
  key: string;
  job_type: string;
  max_gap_seconds: number;
  last_duplicate_at: Date;
}
const LATE_EFFECTS_SQL = `
WITH s AS (${RETENTION_SETTINGS_SQL})
SELECT s.retention_days, s.max_retry_window_days, s.found, l.tenant_id, l.key, l.job_type, l.max_gap_seconds, l.last_duplicate_at
  FROM s LEFT JOIN (
    SELECT tenant_id, key, job_type, max_gap_seconds, last_duplicate_at
      FROM effects
     WHERE created_at >= $1 AND created_at <= $2 AND max_gap_seconds > (SELECT max_retry_window_days FROM s) * 86400::float8
       AND ($3::text IS NULL OR job_type = $3::text) AND ($4::text IS NULL OR tenant_id = $4::text)
     ORDER BY last_duplicate_at DESC NULLS LAST
     LIMIT 5000) l ON true
 ORDER BY l.last_duplicate_at DESC NULLS LAST`;

// The histograms of the top tenants only (tenant_id = ANY: each partition's (tenant_id, key) index).
const TENANT_HISTOGRAMS_SQL = `
SELECT tenant_id, ${effectBucketColumns}
  FROM effects
 WHERE created_at >= $1 AND created_at <= $2 AND tenant_id = ANY($3::text[]) AND max_gap_seconds IS NOT NULL
   AND ($4::text IS NULL OR job_type = $4::text)
 GROUP BY tenant_id`;

// Job types with gap data since a time: whole days from worker_gaps_day (90 days × 50 job types is
// 4,500 rows), the hours before the first whole day from worker_stats_hour.
const JOB_TYPES_SQL = `
SELECT job_type FROM worker_gaps_day WHERE day >= $2::timestamptz
 UNION
SELECT job_type FROM worker_stats_hour WHERE hour >= $1::timestamptz AND hour < $2::timestamptz
   AND (cardinality(gap_buckets) > 0 OR claims_beyond_retention <> 0)
 ORDER BY job_type
 LIMIT 200`;

// The same statements on MySQL. A bucket's count is SUM of its condition (0 or 1) where
// PostgreSQL writes count(*) FILTER; the late effects' threshold is the settings' CTE, as there.
const effectBucketColumnsMysql = Array.from({ length: BUCKET_COUNT }, (_, i) => {
  const lower = bucketLower(i);
  const upper = bucketUpper(i);
  const cond = Number.isFinite(upper)
    ? `max_gap_seconds > ${lower} AND max_gap_seconds <= ${upper}`
    : `max_gap_seconds > ${lower}`;
  return `COALESCE(SUM(${cond}), 0) AS b${i}`;
}).join(", ");

const EFFECTS_BY_DAY_MYSQL = `
SELECT job_type, DATE_FORMAT(last_duplicate_at, '%Y-%m-%d') AS day, ${effectBucketColumnsMysql}, 0 AS beyond
  FROM effects
 WHERE created_at >= ? AND created_at <= ? AND max_gap_seconds IS NOT NULL AND last_duplicate_at IS NOT NULL
   AND tenant_id = ? AND (? IS NULL OR job_type = ?)
 GROUP BY job_type, day
 ORDER BY job_type, day`;

const LATE_EFFECTS_MYSQL = `
WITH s AS (${RETENTION_SETTINGS_SQL})
SELECT s.retention_days, s.max_retry_window_days, s.found, l.tenant_id, l.\`key\`, l.job_type, l.max_gap_seconds, l.last_duplicate_at
  FROM s LEFT JOIN (
    SELECT tenant_id, \`key\`, job_type, max_gap_seconds, last_duplicate_at
      FROM effects
     WHERE created_at >= ? AND created_at <= ? AND max_gap_seconds > (SELECT max_retry_window_days FROM s) * 86400
       AND (? IS NULL OR job_type = ?) AND (? IS NULL OR tenant_id = ?)
     ORDER BY last_duplicate_at DESC
     LIMIT 5000) l ON TRUE
 ORDER BY l.last_duplicate_at DESC`;

const TENANT_HISTOGRAMS_MYSQL = `
SELECT tenant_id, ${effectBucketColumnsMysql}
  FROM effects
 WHERE created_at >= ? AND created_at <= ? AND tenant_id IN (?) AND max_gap_seconds IS NOT NULL
   AND (? IS NULL OR job_type = ?)
 GROUP BY tenant_id`;

// Job types with gap data since a time: the hours (MySQL keeps no day level).
const JOB_TYPES_MYSQL = `
SELECT DISTINCT job_type FROM worker_stats_hour
 WHERE hour >= ? AND (JSON_LENGTH(gap_buckets) > 0 OR claims_beyond_retention <> 0)
 ORDER BY job_type
 LIMIT 200`;

type BucketRow = Record<string, unknown>;

/** The tenant's effects' gap histograms per job type and day, on either engine. */
async function readTenantDays(
  db: EffectsSource,
  input: { from: Date; to: Date; tenant: string; jobType: string | null },
): Promise<GapHistogramDay[]> {
  const { from, to, tenant, jobType } = input;
  const rows = await byEngine(db, {
    postgres: async (pg) =>
      (
        await pg.query<BucketRow & { job_type: string; day: Date }>(EFFECTS_BY_DAY_SQL, [
          from.toISOString(),
          to.toISOString(),
          tenant,
          jobType,
        ])
      ).rows,
    mysql: async (my) =>
      (
        await my.query<BucketRow & { job_type: string; day: string }>(EFFECTS_BY_DAY_MYSQL, [from, to, tenant, jobType, jobType])
      ).map((r) => ({ ...r, day: new Date(`${r.day}T00:00:00.000Z`) })),
  });
  return rows.map(
    (r): GapHistogramDay => ({
      jobType: r.job_type,
      day: new Date(r.day).toISOString(),
      buckets: bucketsOf(r),
      claimsBeyondRetention: 0,
    }),
  );
}

/** Job types with gap data since `since` (the hours before `days`, whole days after it on PostgreSQL). */
async function readJobTypeOptions(db: EffectsSource, since: Date, days: Date): Promise<string[]> {
  const rows = await byEngine(db, {
    postgres: async (pg) => (await pg.query<{ job_type: string }>(JOB_TYPES_SQL, [since.toISOString(), days.toISOString()])).rows,
    mysql: (my) => my.query<{ job_type: string }>(JOB_TYPES_MYSQL, [since]),
  });
  return rows.map((r) => r.job_type);
}

/**
 * A histogram's figures. `exact`: the series' largest per-effect gap, when known: the longest gap
 * then is that, and no percentile is shown above it (nor, without it, above the highest bucket's bound).
 */
function stats(h: number[], retentionSeconds: number, exact?: EffectsMaxGap): GapStats {
  const longest = longestGap(h, exact);
  const cap = longest ? (Number.isFinite(longest.atMost) ? longest.atMost : Number.POSITIVE_INFINITY) : Number.POSITIVE_INFINITY;
  const q = (p: number) => {
    const v = quantile(h, p)?.seconds ?? null;
    return v === null ? null : Math.min(v, cap);
  };
  return {
    samples: total(h),
    p50: q(0.5),
    p90: q(0.9),
    p99: q(0.99),
    p999: q(0.999),
    maxAtLeast: longest?.atLeast ?? null,
    maxAtMost: longest && Number.isFinite(longest.atMost) ? longest.atMost : null,
    maxExact: longest?.exact !== null && longest?.exact !== undefined,
    overflow: h[GAP_BOUNDS.length] ?? 0,
    beyondRetention: countBeyond(h, retentionSeconds).atLeast,
  };
}

const bucketsOf = (r: Record<string, unknown>) =>
  addInto(
    emptyHistogram(),
    Array.from({ length: BUCKET_COUNT }, (_, i) => Number(r[`b${i}`] ?? 0)),
  );

/** The late effects with the settings, then the top tenants' histograms or the largest gap. */
async function readLateEffects(
  db: EffectsSource,
  input: { from: Date; to: Date; jobType: string | null; tenant: string | null },
) {
  const { from, to, jobType, tenant } = input;
  const window = [from.toISOString(), to.toISOString()];
  type LateRow = RetentionSettingsRow & Partial<LateEffect>;
  const lateResult = await byEngine(db, {
    postgres: async (pg) => (await pg.query<LateRow>(LATE_EFFECTS_SQL, [...window, jobType, tenant])).rows,
    mysql: (my) => my.query<LateRow>(LATE_EFFECTS_MYSQL, [from, to, jobType, jobType, tenant, tenant]),
  });
  const settings = toRetentionSettings(lateResult[0]!);
  // key is NOT NULL in effects: a NULL key is the settings-only row of a window without late effects.
  const lateRows = lateResult.filter((r): r is RetentionSettingsRow & LateEffect => r.key != null);

  const lateByTenant = new Map<string, { late: number; maxGap: number }>();
  let largest: (typeof lateRows)[number] | undefined;
  for (const r of lateRows) {
    const t = lateByTenant.get(r.tenant_id) ?? { late: 0, maxGap: 0 };
    t.late += 1;
    t.maxGap = Math.max(t.maxGap, Number(r.max_gap_seconds));
    lateByTenant.set(r.tenant_id, t);
    if (!largest || Number(r.max_gap_seconds) > Number(largest.max_gap_seconds)) largest = r;
  }
  const topTenants = [...lateByTenant]
    .sort(([a, x], [b, y]) => y.late - x.late || y.maxGap - x.maxGap || a.localeCompare(b))
    .slice(0, 5);
  const names = topTenants.map(([t]) => t);
  type TenantRow = Record<string, unknown> & { tenant_id: string };
  const tenantHistograms =
    names.length === 0
      ? []
      : await byEngine(db, {
          postgres: async (pg) => (await pg.query<TenantRow>(TENANT_HISTOGRAMS_SQL, [...window, names, jobType])).rows,
          mysql: (my) => my.query<TenantRow>(TENANT_HISTOGRAMS_MYSQL, [from, to, names, jobType, jobType]),
        });
  const histogramOf = new Map(tenantHistograms.map((r) => [r.tenant_id, bucketsOf(r)]));
  return { settings, lateRows, topTenants, histogramOf };
}

/** The Delivery gaps page's question, over the scope's tenant (a platform scope: every tenant, or `input.tenant`): how late do duplicates arrive, and is the retention long enough? */
export async function getGaps(scope: Scope, input: GetGapsInput, db: EffectsSource = effectsStore()): Promise<Gaps> {
  const { from, to } = input;
  const jobType = input.jobType ?? null;
  const tenant = scope.narrow(input.tenant).tenant;
  const window = [from.toISOString(), to.toISOString()];
  const optionsSince = Math.floor((to.getTime() - 90 * 86_400_000) / 3_600_000) * 3_600_000;
  const optionsDays = Math.ceil(optionsSince / 86_400_000) * 86_400_000;

  // Two chains at once: the rollups (or the tenant's effects) and the job-type choices; and the
  // late effects, then what depends on them (the top tenants' histograms, or the largest gap when
  // none is late). The page waits for the longer chain, not for the sum.
  const [histograms, effects, jobTypeOptions] = await Promise.all([
    tenant === null
      ? loadGapHistograms(db, { from, to, jobType, perDay: true })
      : readTenantDays(db, { from, to, tenant, jobType }).then(summariseDays),
    readLateEffects(db, { from, to, jobType, tenant }),
    readJobTypeOptions(db, new Date(optionsSince), new Date(optionsDays)),
  ]);
  const { settings, lateRows, topTenants, histogramOf } = effects;
  // Each job type's exact longest gap, of the scope's tenant: the advice caps every percentile at
  // it and states it, the same way for a tenant as for the fleet (lib/retention longestGap).
  const effectsMaxGaps = await readEffectsMaxGaps(db, { from, to, jobTypes: [...histograms.byJobType.keys()], tenant });
  const maxGapOf = new Map(effectsMaxGaps.map((g) => [g.jobType, g]));
  const effectsMaxGap = largestOf(effectsMaxGaps);
  const late = settings.maxRetryWindowSeconds;

  const byJobType = histograms.byJobType;
  const retention = settings.retentionSeconds;
  const jobTypes: GapSeries[] = [...byJobType]
    .map(([name, h]) => ({ name, buckets: h.buckets, stats: stats(h.buckets, retention, maxGapOf.get(name)) }))
    .sort((a, b) => b.stats.samples - a.stats.samples || a.name.localeCompare(b.name));
  const allBuckets = emptyHistogram();
  let claimsBeyondRetention = 0;
  for (const h of byJobType.values()) {
    addInto(allBuckets, h.buckets);
    claimsBeyondRetention += h.claimsBeyondRetention;
  }

  const daily: GapDay[] = [...histograms.byDay].map(([day, h]) => {
    const m = maxBounds(h);
    return {
      day,
      samples: total(h),
      p99: quantile(h, 0.99)?.seconds ?? null,
      maxAtMost: m && Number.isFinite(m.atMost) ? m.atMost : null,
      maxAtLeast: m?.atLeast ?? null,
    };
  });

  const tenantSeries: TenantGaps[] = topTenants.map(([name, t]) => {
    const buckets = histogramOf.get(name) ?? emptyHistogram();
    return { name, buckets, stats: stats(buckets, retention), late: t.late, maxGapSeconds: t.maxGap };
  });
  const latestLate: LateDuplicate[] = lateRows.slice(0, 20).map((r) => ({
    tenant: r.tenant_id,
    key: r.key,
    jobType: r.job_type,
    gapSeconds: Number(r.max_gap_seconds),
    at: new Date(r.last_duplicate_at).toISOString(),
  }));

  const advice = adviseRetention({
    from,
    to,
    jobTypes: [...byJobType].map(([name, h]) => ({ jobType: name, ...h })),
    ...settings,
    effectsMaxGaps,
    providerWindows: reconcileProviders(loadConfig()),
  });
  // The same method on the tenant's own gaps (its effects: each longest gap exact); the setting
  // is every tenant's, so the number can differ from the platform's, and the page says why.
  if (tenant !== null)
    advice.reasons.push(
      `computed from ${tenant}'s gaps alone, by the same method as the platform's; the retention is one setting for every tenant, and the platform's recommendation counts every tenant's gaps`,
    );

  return {
    range: input.range,
    from: window[0]!,
    to: window[1]!,
    jobType,
    tenant,
    source: tenant === null ? "rollups" : "effects",
    bounds: [...GAP_BOUNDS],
    retentionSeconds: retention,
    maxRetryWindowSeconds: settings.maxRetryWindowSeconds,
    maxRetryWindowSource: settings.maxRetryWindowSource,
    lateThresholdSeconds: late,
    all: {
      name: jobType ?? "all job types",
      buckets: allBuckets,
      stats: stats(allBuckets, retention, effectsMaxGap ?? undefined),
    },
    jobTypes,
    tenants: tenantSeries,
    daily,
    latestLate,
    effectsMaxGap: effectsMaxGap ?? null,
    claimsBeyondRetention,
    advice,
    jobTypeOptions,
  };
}
