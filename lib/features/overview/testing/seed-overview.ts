import type { Queryable } from "../../../db/types";
import type { EffectStatus } from "../../keys-and-effects/effects-types";
import type { OverviewWindow } from "../overview-types";

/**
 * A small, known data set for the Overview: used by the browser tests (scripts/e2e.ts). Times are
 * relative to `now`; the caller must have made partitions reaching SEED_DAYS_BACK days into the past.
 */
export const SEED_DAYS_BACK = 4;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

interface EffectSpec {
  jobType: string;
  status: EffectStatus;
  count: number;
  ageMs: number;
  /** For in_progress: lease end relative to now (negative = expired: a stuck claim). */
  leaseMs?: number;
}

const EFFECTS: EffectSpec[] = [
  { jobType: "capture-payment", status: "completed", count: 3, ageMs: 10 * MINUTE },
  { jobType: "capture-payment", status: "completed", count: 2, ageMs: 3 * HOUR },
  { jobType: "capture-payment", status: "in_progress", count: 1, ageMs: 10 * MINUTE, leaseMs: 5 * MINUTE },
  { jobType: "capture-payment", status: "in_progress", count: 1, ageMs: 10 * MINUTE, leaseMs: -2 * MINUTE },
  { jobType: "capture-payment", status: "failed", count: 1, ageMs: 3 * HOUR },
  { jobType: "capture-payment", status: "completed", count: 4, ageMs: 3 * DAY },
  { jobType: "send-receipt", status: "completed", count: 4, ageMs: 3 * HOUR },
  { jobType: "send-receipt", status: "abandoned", count: 1, ageMs: 10 * MINUTE },
  { jobType: "sync-search-index", status: "completed", count: 3, ageMs: 10 * MINUTE },
];

const WORKER_STATS = [
  { jobType: "capture-payment", ageMs: 5 * MINUTE, claims: 6, suppressed: 3 },
  { jobType: "capture-payment", ageMs: 2 * HOUR, claims: 4, suppressed: 4 },
  { jobType: "send-receipt", ageMs: 3 * HOUR, claims: 5, suppressed: 2 },
  { jobType: "sync-search-index", ageMs: 10 * MINUTE, claims: 3, suppressed: 0 },
  { jobType: "capture-payment", ageMs: 3 * DAY, claims: 4, suppressed: 9 },
];

const UNCAUGHT = [
  { jobType: "send-receipt", constraintName: "receipts_order_id_key", ageMs: 30 * MINUTE, count: 2 },
  { jobType: "capture-payment", constraintName: "payments_pkey", ageMs: 5 * HOUR, count: 1 },
  { jobType: "capture-payment", constraintName: "payments_pkey", ageMs: 2 * DAY, count: 1 },
];

const TENANTS = ["acme", "globex", "initech"];

interface ExpectedJobType {
  effects: number;
  completed: number;
  in_progress: number;
  failed: number;
  abandoned: number;
  claims: number;
  duplicateSuppressions: number;
  uncaughtViolations: number;
}

/** What the Overview must show for the seed, per window (worked out by hand from the tables above). */
export const SEED_EXPECTED: Record<
  OverviewWindow,
  {
    totals: ExpectedJobType & { stuck: number };
    jobTypes: Record<string, ExpectedJobType>;
  }
> = {
  "1h": {
    totals: {
      effects: 9,
      completed: 6,
      in_progress: 2,
      failed: 0,
      abandoned: 1,
      stuck: 1,
      claims: 9,
      duplicateSuppressions: 3,
      uncaughtViolations: 2,
    },
    jobTypes: {
      "capture-payment": e(5, 3, 2, 0, 0, 6, 3, 0),
      "sync-search-index": e(3, 3, 0, 0, 0, 3, 0, 0),
      "send-receipt": e(1, 0, 0, 0, 1, 0, 0, 2),
    },
  },
  "24h": {
    totals: {
      effects: 16,
      completed: 12,
      in_progress: 2,
      failed: 1,
      abandoned: 1,
      stuck: 1,
      claims: 18,
      duplicateSuppressions: 9,
      uncaughtViolations: 3,
    },
    jobTypes: {
      "capture-payment": e(8, 5, 2, 1, 0, 10, 7, 1),
      "send-receipt": e(5, 4, 0, 0, 1, 5, 2, 2),
      "sync-search-index": e(3, 3, 0, 0, 0, 3, 0, 0),
    },
  },
  "7d": {
    totals: {
      effects: 20,
      completed: 16,
      in_progress: 2,
      failed: 1,
      abandoned: 1,
      stuck: 1,
      claims: 22,
      duplicateSuppressions: 18,
      uncaughtViolations: 4,
    },
    jobTypes: {
      "capture-payment": e(12, 9, 2, 1, 0, 14, 16, 2),
      "send-receipt": e(5, 4, 0, 0, 1, 5, 2, 2),
      "sync-search-index": e(3, 3, 0, 0, 0, 3, 0, 0),
    },
  },
};

function e(
  effects: number,
  completed: number,
  in_progress: number,
  failed: number,
  abandoned: number,
  claims: number,
  duplicateSuppressions: number,
  uncaughtViolations: number,
): ExpectedJobType {
  return { effects, completed, in_progress, failed, abandoned, claims, duplicateSuppressions, uncaughtViolations };
}

const floorToMinute = (ms: number) => new Date(Math.floor(ms / MINUTE) * MINUTE);

/** Inserts the seed. Not idempotent: run it once on an empty database. */
export async function seedOverview(db: Queryable, now: Date = new Date()): Promise<void> {
  const t = now.getTime();
  let n = 0;
  for (const spec of EFFECTS) {
    for (let i = 0; i < spec.count; i++) {
      const createdAt = new Date(t - spec.ageMs);
      const completed = spec.status === "completed" ? new Date(createdAt.getTime() + 1500) : null;
      await db.query(
        `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until, first_message_id,
                              outcome, created_at, updated_at, completed_at)
         VALUES ($1, $2, $3, $4, 'external', 1, $5, $6, $7, $8, $9, $9, $10)`,
        [
          TENANTS[n % TENANTS.length],
          `${spec.jobType}:${spec.status}:${spec.ageMs}:${i}`,
          spec.jobType,
          spec.status,
          spec.status === "in_progress" ? `worker-${n}` : null,
          spec.leaseMs === undefined ? null : new Date(t + spec.leaseMs),
          `msg-${n}`,
          spec.status === "completed" ? JSON.stringify({ ok: true }) : null,
          createdAt,
          completed,
        ],
      );
      n++;
    }
  }
  for (const s of WORKER_STATS) {
    await db.query(
      `INSERT INTO worker_stats_minute (minute, job_type, claims, suppressed, deliveries) VALUES ($1, $2, $3, $4, $5)`,
      [floorToMinute(t - s.ageMs), s.jobType, s.claims, s.suppressed, s.claims + s.suppressed],
    );
  }
  for (const u of UNCAUGHT) {
    await db.query(`INSERT INTO uncaught_violations_minute (minute, job_type, constraint_name, count) VALUES ($1, $2, $3, $4)`, [
      floorToMinute(t - u.ageMs),
      u.jobType,
      u.constraintName,
      u.count,
    ]);
  }
  await seedOnCallExtras(db, t);
}

/**
 * The Overview's rollup tables for the same seed: per-tenant hourly suppressions and violations (with the
 * key behind each violation), redeliveries (sync-search-index is redelivered and never suppressed:
 * "not wired up") and claim-latency buckets, all agreeing with the rows above.
 */
async function seedOnCallExtras(db: Queryable, t: number): Promise<void> {
  const hour = (ms: number) => new Date(Math.floor(ms / HOUR) * HOUR);
  for (const [i, s] of WORKER_STATS.entries()) {
    const minute = floorToMinute(t - s.ageMs);
    await db.query(`UPDATE worker_stats_minute SET redeliveries = $3 WHERE minute = $1 AND job_type = $2`, [
      minute,
      s.jobType,
      s.jobType === "sync-search-index" ? 2 : s.suppressed,
    ]);
    const buckets = new Array(15).fill(0);
    buckets[3] = s.claims; // (5 ms, 10 ms]
    await db.query(`INSERT INTO claim_latency_minute (minute, job_type, buckets) VALUES ($1, $2, $3)`, [
      minute,
      s.jobType,
      buckets,
    ]);
    if (s.suppressed > 0)
      await db.query(
        `INSERT INTO tenant_suppressions_hour (hour, tenant_id, job_type, count) VALUES ($1, $2, $3, $4)
         ON CONFLICT (hour, tenant_id, job_type, marked) DO UPDATE SET count = tenant_suppressions_hour.count + EXCLUDED.count`,
        [hour(minute.getTime()), TENANTS[i % TENANTS.length], s.jobType, s.suppressed],
      );
  }
  for (const [i, u] of UNCAUGHT.entries()) {
    const at = floorToMinute(t - u.ageMs);
    await db.query(
      `INSERT INTO tenant_violations_hour (hour, tenant_id, job_type, constraint_name, count, last_key, last_seen)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        hour(at.getTime()),
        TENANTS[(i + 1) % TENANTS.length],
        u.jobType,
        u.constraintName,
        u.count,
        `${u.jobType}:order-${100 + i}`,
        at,
      ],
    );
    // Each violation on a key of its own, as the worker records them.
    for (let n = 0; n < u.count; n++) {
      await db.query(
        `INSERT INTO uncaught_violation_keys (occurred_at, tenant_id, job_type, constraint_name, key, message_id)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [
          at,
          TENANTS[(i + 1) % TENANTS.length],
          u.jobType,
          u.constraintName,
          n === 0 ? `${u.jobType}:order-${100 + i}` : `${u.jobType}:order-${100 + i}-${n}`,
          `msg-violation-${i}-${n}`,
        ],
      );
    }
  }
}
