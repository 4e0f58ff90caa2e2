import { randomBytes } from "node:crypto";
import type { Queryable } from "./db-types";
import { DEMO_TENANTS } from "./settings";

/**
 * Backfills weeks of demo history so the gap, retention and trend views have data on a fresh
 * machine: effects (with duplicates whose gaps span seconds to days) and per-minute rollups with
 * a daily rhythm, gap histograms, an outage (minutes with no rows at all) and an incident burst of
 * uncaught unique violations. Every row is marked demo. Days are written oldest first, one
 * transaction each, so progress is visible and an interrupted backfill leaves whole days.
 */
export interface HistoryOptions {
  spanMs: number;
  /** Orders per tenant per day. */
  ordersPerDay?: number;
  now?: Date;
  onProgress?: (line: string) => void;
}

export interface HistoryResult {
  days: number;
  effects: number;
  rollupRows: number;
  violationRows: number;
}

const DAY_MS = 86_400_000;

// Mean load per minute by job type (claims per minute at the daily average). Only job types the
// history also writes effect rows for: rollups for order.refund without a single refund effect made
// the Overview show 2,056 refund claims against 24 effects (issue 13).
const ROLLUP_JOB_TYPES = ["order.paid", "order.capture", "order.mark_paid", "order.receipt"];
const ROLLUP_WEIGHTS = [2.4, 0.9, 0.9, 0.9];

// Why random() sits in CTE columns: a volatile function in a CTE keeps it materialised, so each
// row draws its own numbers once and the outer SELECT can reuse them consistently.
const EFFECTS_SQL = `
WITH orders AS (
  SELECT t.tenant, g.n,
         $1::timestamptz + (g.n + random()) * (($2::timestamptz - $1::timestamptz) / $3::int) AS at,
         random() < 0.66 AS combined
    FROM unnest($4::text[]) AS t(tenant), generate_series(0, $3::int - 1) AS g(n)
), steps AS (
  SELECT o.tenant, o.n, o.combined, o.at + s.ord * interval '350 milliseconds' AS at, s.step, s.policy,
         random() AS r_status, random() AS r_dup, random() AS r_gap, random() AS r_attempt
    FROM orders o
   CROSS JOIN (VALUES ('capture', 'external', 0), ('mark-paid', 'transactional', 1), ('receipt', 'at_most_once', 2)) AS s(step, policy, ord)
   WHERE o.at < $5::timestamptz AND NOT (o.at >= $6::timestamptz AND o.at < $7::timestamptz)
), shaped AS (
  SELECT *,
         CASE WHEN r_dup < 0.22 THEN 1 + floor(power(r_dup / 0.22, 3) * 3)::int ELSE 0 END AS dups,
         -- log-skewed gap: mostly seconds, some minutes and hours, a few days
         0.3 * power(10, power(r_gap, 3) * 6) AS gap
    FROM steps
)
INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until, first_message_id, last_message_id,
                     outcome, error, created_at, updated_at, completed_at, duplicate_count, last_duplicate_at, max_gap_seconds, demo)
SELECT tenant,
       step || ':hist-' || $8::text || '-' || tenant || '-' || $9::int || '-' || n,
       CASE WHEN combined THEN 'order.paid' WHEN step = 'capture' THEN 'order.capture'
            WHEN step = 'mark-paid' THEN 'order.mark_paid' ELSE 'order.receipt' END,
       CASE WHEN step = 'receipt' AND r_status < 0.004 THEN 'abandoned' ELSE 'completed' END,
       policy,
       CASE WHEN r_attempt < 0.03 THEN 2 ELSE 1 END,
       'history',
       NULL,
       'hist-msg-' || $8::text || '-' || tenant || '-' || $9::int || '-' || n,
       'hist-msg-' || $8::text || '-' || tenant || '-' || $9::int || '-' || n || CASE WHEN dups > 0 THEN '-r' || dups ELSE '' END,
       CASE WHEN step = 'capture' THEN jsonb_build_object('chargeId', 'ch_hist_' || md5(tenant || n || at)::text)
            WHEN step = 'mark-paid' THEN jsonb_build_object('paid', true)
            WHEN step = 'receipt' AND r_status < 0.004 THEN NULL
            ELSE jsonb_build_object('emailId', n) END,
       CASE WHEN step = 'receipt' AND r_status < 0.004 THEN 'abandoned: lease of attempt 1 (history) expired' END,
       at, at + interval '120 milliseconds', at + interval '120 milliseconds',
       dups,
       CASE WHEN dups > 0 THEN least(at + gap * interval '1 second', $5::timestamptz) END,
       CASE WHEN dups > 0 THEN least(gap, extract(epoch FROM $5::timestamptz - at)) END,
       true
  FROM shaped`;

const ROLLUPS_SQL = `
WITH m AS (
  SELECT minute, jt,
         w * (1 + 0.55 * sin(2 * pi() * (extract(hour FROM minute) + extract(minute FROM minute) / 60.0 - 9) / 24))
           * (0.6 + 0.8 * random()) AS load,
         (minute >= $7::timestamptz AND minute < $8::timestamptz AND jt IN ('order.paid', 'order.mark_paid')) AS incident,
         ARRAY[
           floor(w * 0.050 * 2 * random() + random()), floor(w * 0.045 * 2 * random() + random()),
           floor(w * 0.030 * 2 * random() + random()), floor(w * 0.025 * 2 * random() + random()),
           floor(w * 0.015 * 2 * random() + random()), floor(w * 0.010 * 2 * random() + random()),
           floor(w * 0.008 * 2 * random() + random()), floor(w * 0.005 * 2 * random() + random()),
           floor(w * 0.003 * 2 * random() + random()), floor(w * 0.002 * 2 * random() + random()),
           floor(w * 0.0012 * 2 * random() + random()), floor(w * 0.0008 * 2 * random() + random()),
           floor(w * 0.0004 * 2 * random() + random()), floor(w * 0.0002 * 2 * random() + random()),
           -- the open-ended top bucket (> 30 d) stays empty: weeks of history cannot hold a gap longer
           -- than 30 days, and a count there makes the retention advisor refuse (the gap is unknown)
           floor(w * 0.0001 * 2 * random() + random()), 0
         ]::bigint[] AS buckets,
         random() AS r1, random() AS r2, random() AS r3, random() AS r4, random() AS r5, random() AS r6, random() AS r7
    FROM generate_series($1::timestamptz, $2::timestamptz - interval '1 minute', interval '1 minute') AS minute
   CROSS JOIN unnest($3::text[], $4::float8[]) AS j(jt, w)
   WHERE minute < $5::timestamptz AND NOT (minute >= $6::timestamptz AND minute < $9::timestamptz)
), c AS (
  SELECT minute, jt, buckets, incident,
         floor(load + r1)::bigint AS claims,
         (SELECT sum(b) FROM unnest(buckets) AS b)::bigint AS suppressed,
         floor(load * 0.02 + r2)::bigint AS in_flight,
         floor(load * 0.004 + r3)::bigint AS takeovers,
         CASE WHEN jt IN ('order.paid', 'order.receipt') THEN floor(load * 0.003 + r4)::bigint ELSE 0 END AS abandoned,
         floor(load * 0.01 + r5)::bigint AS failed,
         floor(load * (CASE WHEN incident THEN 0.3 ELSE 0.001 END) + r6)::bigint AS key_reuse,
         CASE WHEN jt IN ('order.paid', 'order.mark_paid')
              THEN floor((CASE WHEN incident THEN 1.5 ELSE 0.004 END) + r7)::bigint ELSE 0 END AS uncaught,
         (SELECT sum(b * mid) FROM unnest(buckets, ARRAY[0.5, 3, 10, 37, 180, 600, 2250, 9000, 28800, 64800, 129600, 216000,
                 432000, 907200, 1900800, 3000000]::float8[]) AS x(b, mid)) AS gap_sum
    FROM m
), stats AS (
  INSERT INTO worker_stats_minute AS w (minute, job_type, claims, suppressed, in_flight, takeovers, abandoned, failed, key_reuse,
         uncaught_violations, deliveries, redeliveries, message_id_keys, claim_seconds_sum, gap_buckets, gap_seconds_sum, demo)
  SELECT minute, jt, claims, suppressed, in_flight, takeovers, abandoned, failed, key_reuse, uncaught,
         claims + suppressed + in_flight + failed, suppressed + in_flight + failed, 0,
         claims * 0.0035, buckets, coalesce(gap_sum, 0), true
    FROM c
  ON CONFLICT (minute, job_type) DO UPDATE SET
    claims = w.claims + EXCLUDED.claims, suppressed = w.suppressed + EXCLUDED.suppressed,
    in_flight = w.in_flight + EXCLUDED.in_flight, takeovers = w.takeovers + EXCLUDED.takeovers,
    abandoned = w.abandoned + EXCLUDED.abandoned, failed = w.failed + EXCLUDED.failed,
    key_reuse = w.key_reuse + EXCLUDED.key_reuse, uncaught_violations = w.uncaught_violations + EXCLUDED.uncaught_violations,
    deliveries = w.deliveries + EXCLUDED.deliveries, redeliveries = w.redeliveries + EXCLUDED.redeliveries,
    claim_seconds_sum = w.claim_seconds_sum + EXCLUDED.claim_seconds_sum,
    gap_buckets = onceboard_add_counts(w.gap_buckets, EXCLUDED.gap_buckets),
    gap_seconds_sum = w.gap_seconds_sum + EXCLUDED.gap_seconds_sum,
    demo = w.demo AND EXCLUDED.demo, updated_at = now()
  RETURNING 1
), violations AS (
  INSERT INTO uncaught_violations_minute AS u (minute, job_type, constraint_name, count, demo)
  SELECT minute, jt, 'demo_accounting_entries_entry_key', uncaught, true FROM c WHERE uncaught > 0
  ON CONFLICT (minute, job_type, constraint_name) DO UPDATE SET count = u.count + EXCLUDED.count, demo = u.demo AND EXCLUDED.demo
  RETURNING 1
)
SELECT (SELECT count(*) FROM stats)::int AS stats, (SELECT count(*) FROM violations)::int AS violations`;

/** True when there is nothing yet: no effects and no rollups (the default trigger for a backfill). */
export async function isDatabaseEmpty(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ empty: boolean }>(
    "SELECT NOT EXISTS (SELECT 1 FROM effects) AND NOT EXISTS (SELECT 1 FROM worker_stats_minute) AS empty",
  );
  return rows[0]?.empty ?? false;
}

export async function backfillHistory(db: Queryable, options: HistoryOptions): Promise<HistoryResult> {
  const now = options.now ?? new Date();
  const progress = options.onProgress ?? (() => {});
  const ordersPerDay = options.ordersPerDay ?? 600;
  const end = new Date(Math.floor(now.getTime() / 60_000) * 60_000 - 60_000);
  const start = new Date(end.getTime() - options.spanMs);
  const days = Math.ceil(options.spanMs / DAY_MS);
  const run = randomBytes(3).toString("hex");

  // No default partition: rows older than the premade range would fail, so make them first.
  const backDays = Math.ceil((now.getTime() - start.getTime()) / DAY_MS) + 1;
  await db.query(
    "SELECT onceboard_ensure_partitions((now() AT TIME ZONE 'UTC')::date - $1::int, (now() AT TIME ZONE 'UTC')::date + 7)",
    [backDays],
  );

  const result: HistoryResult = { days: 0, effects: 0, rollupRows: 0, violationRows: 0 };
  for (let i = 0; i < days; i++) {
    const from = new Date(start.getTime() + i * DAY_MS);
    const to = new Date(Math.min(from.getTime() + DAY_MS, end.getTime()));
    if (to <= from) break;
    // One 25-minute outage every few days (no rows at all: the charts show the hole) and one
    // 30-minute incident of uncaught unique violations and key reuse, five days back.
    const outageFrom = i % 4 === 2 ? new Date(from.getTime() + 2 * 3_600_000 + 10 * 60_000) : new Date(0);
    const outageTo = new Date(outageFrom.getTime() + 25 * 60_000);
    const incidentFrom = i === Math.max(0, days - 5) ? new Date(from.getTime() + 14 * 3_600_000) : new Date(0);
    const incidentTo = new Date(incidentFrom.getTime() + 30 * 60_000);
    const fraction = (to.getTime() - from.getTime()) / DAY_MS;
    const orders = Math.max(1, Math.round(ordersPerDay * fraction));

    await db.query("BEGIN");
    try {
      const effects = await db.query(EFFECTS_SQL, [from, to, orders, DEMO_TENANTS, end, outageFrom, outageTo, run, i]);
      const rollups = await db.query<{ stats: number; violations: number }>(ROLLUPS_SQL, [
        from,
        to,
        ROLLUP_JOB_TYPES,
        ROLLUP_WEIGHTS,
        end,
        outageFrom,
        incidentFrom,
        incidentTo,
        outageTo,
      ]);
      await db.query("COMMIT");
      result.days += 1;
      result.effects += effects.rowCount ?? 0;
      result.rollupRows += rollups.rows[0]?.stats ?? 0;
      result.violationRows += rollups.rows[0]?.violations ?? 0;
    } catch (error) {
      await db.query("ROLLBACK").catch(() => {});
      throw error;
    }
    progress(
      `history: day ${i + 1}/${days} (${from.toISOString().slice(0, 10)}): ${result.effects.toLocaleString("en")} effects, ${result.rollupRows.toLocaleString("en")} rollup rows so far`,
    );
  }
  return result;
}
