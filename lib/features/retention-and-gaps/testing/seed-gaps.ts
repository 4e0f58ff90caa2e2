import type { Queryable } from "../../../db/types";

/**
 * A known, demo-like gap data set for the Delivery gaps page: read-model tests and the browser
 * tests (scripts/e2e.ts). Retention 7 d, declared retry window 3 d; 28 duplicates more than 7 days
 * late; a largest per-effect gap of 3.46 days. Times are relative to `now`; the caller must have
 * made effects partitions reaching GAPS_SEED_DAYS_BACK days back.
 *
 * Rollup rows carry only gap buckets (no claims, no suppressions), outside the last 24 hours, under the Overview seed's job
 * type names, and the effects are older than 7 days: the Overview's seeded numbers do not move.
 */
export const GAPS_SEED_DAYS_BACK = 21;

const DAY = 86_400_000;
const BUCKETS = 16;

/** job type → rows of (days ago, bucket index → count). */
const ROLLUPS: Record<string, [number, Record<number, number>][]> = {
  // 9,980 in (5 s, 15 s], 20 in (3 d, 7 d], 28 in (7 d, 14 d]: p99.9 ≈ 11.5 d, × 2 → 23 d.
  "capture-payment": [
    [20, { 2: 2000, 12: 5 }],
    [12, { 2: 2980, 12: 5, 13: 10 }],
    [6, { 2: 3000, 12: 5, 13: 10 }],
    [1.5, { 2: 2000, 12: 5, 13: 8 }],
  ],
  // 1,990 in (15 s, 1 min], 10 in (12 h, 1 d].
  "send-receipt": [
    [10, { 3: 1000, 9: 4 }],
    [2.5, { 3: 990, 9: 6 }],
  ],
};

export const GAPS_SEED_EXPECTED = {
  retentionDays: 7,
  maxRetryWindowDays: 3,
  samples: 10_028 + 2000,
  lateBeyondRetention: 28,
  recommendedDays: 23,
  effectsMaxGapSeconds: 298_944,
  effectsMaxGapKey: "receipt:order-346",
  topTenant: "globex",
  lateEffects: 4,
};

/** (tenant, key, job type, days ago created, max gap seconds) */
const EFFECTS: [string, string, string, number, number][] = [
  ["acme", "receipt:order-346", "send-receipt", 12, 298_944],
  ["globex", "capture:order-901", "capture-payment", 15, 270_000],
  ["globex", "capture:order-902", "capture-payment", 14, 262_000],
  ["globex", "capture:order-903", "capture-payment", 9, 3600],
  ["initech", "capture:order-77", "capture-payment", 10, 259_500],
  ["initech", "capture:order-78", "capture-payment", 10, 40],
];

export async function seedGaps(db: Queryable, now = new Date()): Promise<void> {
  await db.query(
    `INSERT INTO retention_settings (id, retention_days, max_retry_window_days) VALUES (1, 7, 3)
     ON CONFLICT (id) DO UPDATE SET retention_days = 7, max_retry_window_days = 3`,
  );
  for (const [jobType, rows] of Object.entries(ROLLUPS)) {
    for (const [daysAgo, counts] of rows) {
      const minute = new Date(Math.floor((now.getTime() - daysAgo * DAY) / 60_000) * 60_000);
      const buckets = Array.from({ length: BUCKETS }, (_, i) => counts[i] ?? 0);
      await db.query(
        `INSERT INTO worker_stats_minute AS w (minute, job_type, gap_buckets) VALUES ($1, $2, $3::bigint[])
         ON CONFLICT (minute, job_type, marked) DO UPDATE SET gap_buckets = onceboard_add_counts(w.gap_buckets, EXCLUDED.gap_buckets)`,
        [minute.toISOString(), jobType, `{${buckets.join(",")}}`],
      );
    }
  }
  for (const [tenant, key, jobType, daysAgo, gap] of EFFECTS) {
    const created = new Date(now.getTime() - daysAgo * DAY);
    await db.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, created_at, completed_at, duplicate_count, last_duplicate_at, max_gap_seconds)
       VALUES ($1, $2, $3, 'completed', 'once', $4, $4, 1, $4::timestamptz + $5 * interval '1 second', $5)`,
      [tenant, key, jobType, created.toISOString(), gap],
    );
  }
}

/** MySQL's DATETIME text of an instant (UTC), as the library writes it. */
const mysqlTime = (at: Date) => at.toISOString().replace("T", " ").replace("Z", "");

/**
 * The same data set in a MySQL or MariaDB effects store (the library's tables there): `run` takes
 * `?` placeholders. The advisor's numbers are the same as seedGaps' (GAPS_SEED_EXPECTED).
 */
export async function seedGapsMysql(run: (sql: string, values: unknown[]) => Promise<unknown>, now = new Date()): Promise<void> {
  await run(
    `INSERT INTO retention_settings (id, retention_days, max_retry_window_days) VALUES (1, 7, 3)
     ON DUPLICATE KEY UPDATE retention_days = 7, max_retry_window_days = 3`,
    [],
  );
  for (const [jobType, rows] of Object.entries(ROLLUPS)) {
    for (const [daysAgo, counts] of rows) {
      const minute = new Date(Math.floor((now.getTime() - daysAgo * DAY) / 60_000) * 60_000);
      const buckets = Array.from({ length: BUCKETS }, (_, i) => counts[i] ?? 0);
      // The MySQL store writes each flush to both levels; its reads take whole hours from the hour one.
      const hour = new Date(Math.floor(minute.getTime() / 3_600_000) * 3_600_000);
      for (const [table, column, t] of [
        ["worker_stats_minute", "minute", minute],
        ["worker_stats_hour", "hour", hour],
      ] as const)
        await run(`INSERT INTO ${table} (${column}, job_type, gap_buckets, updated_at) VALUES (?, ?, ?, ?)`, [
          mysqlTime(t),
          jobType,
          JSON.stringify(buckets),
          mysqlTime(now),
        ]);
    }
  }
  for (const [tenant, key, jobType, daysAgo, gap] of EFFECTS) {
    const created = new Date(now.getTime() - daysAgo * DAY);
    await run(
      `INSERT INTO effects (tenant_id, \`key\`, job_type, status, policy, created_at, updated_at, completed_at, duplicate_count, last_duplicate_at, max_gap_seconds)
       VALUES (?, ?, ?, 'completed', 'once', ?, ?, ?, 1, ?, ?)`,
      [
        tenant,
        key,
        jobType,
        mysqlTime(created),
        mysqlTime(created),
        mysqlTime(created),
        mysqlTime(new Date(created.getTime() + gap * 1000)),
        gap,
      ],
    );
  }
}
