import pg from "pg";
import { Scope } from "../lib/auth/scope";
import { ensureEffectPartitions } from "../lib/db/partitions";
import { getRetentionAdvice, readEffectsMaxGaps } from "../lib/features/retention-and-gaps/advise-retention";
import { getGaps } from "../lib/features/retention-and-gaps/get-gaps";
import { loadGapHistograms } from "../lib/features/retention-and-gaps/load-gap-histograms";
import { benchNumber } from "./env";
import { benchDatabase, percentile } from "./support";

/**
 * `npm run bench:gaps`: p95 of the retention advice and of the Delivery gaps page's data over 30
 * days of per-minute rollups for 50 job types (2.23 million worker_stats_minute rows over 31 UTC
 * days, and the worker_stats_hour and worker_gaps_day rows their triggers keep), plus the same days
 * of effects (20,000 a day over 100 tenants, 22% with a duplicate) for the per-tenant, latest-late
 * and largest-gap parts, and the retention_settings row.
 * Last line: `gaps p95_ms=<n> rows=<n>` (p95 = the slower of the two). Target ≤ 250 ms.
 */
const DAYS = 30;
const JOB_TYPES = 50;
const EFFECTS_PER_DAY = benchNumber("BENCH_EFFECTS_PER_DAY", 20_000, { integer: true });
const ITERATIONS = benchNumber("BENCH_ITERATIONS", 20, { integer: true });
const log = (line: string) => process.stdout.write(`${line}\n`);

const p95 = (xs: number[]) => percentile(xs, 95);

// One day of per-minute rollups for every job type, log-skewed gap histograms. Written minute by
// minute (ORDER BY m, j), as workers flush them: a window's edge minutes sit on a few pages.
const SEED_DAY = `
INSERT INTO worker_stats_minute (minute, job_type, claims, suppressed, deliveries, redeliveries, gap_buckets, gap_seconds_sum, claims_beyond_retention)
SELECT m, 'job.' || j, 40, 8, 50, 10,
       ARRAY[floor(random() * 4), floor(random() * 3), floor(random() * 2), floor(random() * 2), floor(random() * 1.5),
             floor(random() * 1.2), floor(random() * 1.1), floor(random() * 1.05), floor(random() * 1.02), floor(random() * 1.01),
             floor(random() * 1.005), floor(random() * 1.002), floor(random() * 1.001), 0, 0, 0]::bigint[],
       100, 0
  FROM generate_series($1::timestamptz, $1::timestamptz + interval '1 day' - interval '1 minute', interval '1 minute') AS m,
       generate_series(1, ${JOB_TYPES}) AS j
 ORDER BY m, j`;

const SEED_EFFECTS = `
INSERT INTO effects (tenant_id, key, job_type, status, policy, created_at, completed_at, duplicate_count, last_duplicate_at, max_gap_seconds)
SELECT 'tenant-' || (g % 100), 'k:' || $2::int || ':' || g, 'job.' || (1 + g % ${JOB_TYPES}), 'completed', 'once', at, at,
       CASE WHEN dup THEN 1 ELSE 0 END,
       CASE WHEN dup THEN at + gap * interval '1 second' END,
       CASE WHEN dup THEN gap END
  FROM (SELECT g, $1::timestamptz + (g::float8 / $3::int) * interval '1 day' AS at, random() < 0.22 AS dup,
               0.3 * power(10, power(random(), 3) * 6) AS gap
          FROM generate_series(1, $3::int) AS g) s`;

async function main() {
  const db = await benchDatabase(log);
  const pool = new pg.Pool({ connectionString: db.sqlUrl, max: 8 });
  pool.on("error", () => {});
  try {
    const now = new Date();
    const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    await ensureEffectPartitions(pool, { now, back: DAYS + 1, ahead: 1 });
    // The settings the page and the advice read (the migration's defaults, written out).
    await pool.query(
      `INSERT INTO retention_settings (id, retention_days, max_retry_window_days) VALUES (1, 7, 3)
       ON CONFLICT (id) DO UPDATE SET retention_days = 7, max_retry_window_days = 3`,
    );
    for (let d = DAYS; d >= 0; d--) {
      const day = new Date(today.getTime() - d * 86_400_000);
      await pool.query(SEED_DAY, [day.toISOString()]);
      await pool.query(SEED_EFFECTS, [day.toISOString(), d, EFFECTS_PER_DAY]);
      log(`seeded ${day.toISOString().slice(0, 10)} (${DAYS - d + 1}/${DAYS + 1})`);
    }
    await pool.query("VACUUM ANALYZE worker_stats_minute");
    await pool.query("VACUUM ANALYZE worker_stats_hour");
    await pool.query("VACUUM ANALYZE worker_gaps_day");
    await pool.query("ANALYZE effects");
    const counts = await pool.query<{ minutes: string; hours: string; days: string; effects: string }>(
      `SELECT (SELECT count(*) FROM worker_stats_minute) AS minutes, (SELECT count(*) FROM worker_stats_hour) AS hours,
              (SELECT count(*) FROM worker_gaps_day) AS days, (SELECT count(*) FROM effects) AS effects`,
    );
    const c = counts.rows[0]!;
    log(`rows: ${c.minutes} minute rollups, ${c.hours} hour and ${c.days} day sums, ${c.effects} effects`);
    const index = await pool.query("SELECT to_regclass('effects_max_gap_seconds_idx') IS NOT NULL AS present");
    log(
      `effects_max_gap_seconds_idx: ${index.rows[0]?.present ? "present" : "absent (every effects read is a pass over the window)"}`,
    );

    const time = async (fn: () => Promise<unknown>) => {
      const started = performance.now();
      await fn();
      return performance.now() - started;
    };
    const query = () => {
      const to = new Date();
      return { range: "30d" as const, from: new Date(to.getTime() - DAYS * 86_400_000), to };
    };
    // Warm-up (plans, caches), not measured.
    await getGaps(Scope.operator(), query(), pool);
    await getRetentionAdvice(pool);
    const page: number[] = [];
    const advice: number[] = [];
    const rollups: number[] = [];
    const effects: number[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      page.push(await time(() => getGaps(Scope.operator(), query(), pool)));
      advice.push(await time(() => getRetentionAdvice(pool)));
      // The two halves alone: the rollup histograms, and each job type's exact largest gap over 30 days of effects.
      let jobTypes: string[] = [];
      rollups.push(
        await time(async () => {
          jobTypes = [...(await loadGapHistograms(pool, { ...query(), perDay: true })).byJobType.keys()];
        }),
      );
      effects.push(await time(() => readEffectsMaxGaps(pool, { ...query(), jobTypes })));
      log(
        `iteration ${i + 1}/${ITERATIONS}: page ${page.at(-1)!.toFixed(1)} ms, advice ${advice.at(-1)!.toFixed(1)} ms (rollups ${rollups.at(-1)!.toFixed(1)} ms, effects max gap ${effects.at(-1)!.toFixed(1)} ms)`,
      );
    }
    const pageP95 = p95(page);
    const adviceP95 = p95(advice);
    log(
      `page p95 ${pageP95.toFixed(1)} ms, advice p95 ${adviceP95.toFixed(1)} ms; rollups alone p95 ${p95(rollups).toFixed(1)} ms, effects max gap alone p95 ${p95(effects).toFixed(1)} ms (PostgreSQL ${db.serverVersion}, ${db.where})`,
    );
    log(`gaps p95_ms=${Math.round(Math.max(pageP95, adviceP95))} rows=${c.minutes}`);
  } finally {
    await pool.end();
    await db.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
