import { randomBytes } from "node:crypto";
import type { Queryable } from "./db-types";
import { DEMO_TENANTS } from "./settings";
import { PROVIDER_SCHEMA } from "./stripe-storage";

/**
 * Backfills weeks of demo history so the gap, retention and trend views have data on a fresh
 * machine: effects (with duplicates whose gaps span seconds to days, takeovers, abandoned
 * receipts), an outage (minutes with no rows at all) and an incident of uncaught unique violations
 * and key reuse. The rollups are not drawn on their own: they are counted from the effect rows the
 * same statement writes, claim by claim as the worker library counts them (see HISTORY_SQL), so
 * the Overview's claims, suppressions, gaps, tenants and violations agree with the effects. Every
 * rollup row is marked (marked is part of each rollup table's key), so demo:reset removes
 * exactly the history's counts. Days are written oldest first, one statement and
 * transaction each, so progress is visible and an interrupted backfill leaves whole days.
 */
interface HistoryOptions {
  spanMs: number;
  /** Orders per tenant per day. */
  ordersPerDay?: number;
  now?: Date;
  onProgress?: (line: string) => void;
}

interface HistoryResult {
  days: number;
  effects: number;
  /** worker_stats_minute rows the backfill created (a later day's duplicates may add to a row made earlier). */
  rollupRows: number;
  violationRows: number;
}

const DAY_MS = 86_400_000;

/** Where history's outages fall: day k (from the start) with k % 4 = 2, 02:10 to 02:35 after the day's start. */
export const HISTORY_OUTAGE = { everyDays: 4, onDay: 2, fromMs: 130 * 60_000, toMs: 155 * 60_000 };

// One statement per day. Effects as before (66% of orders run their three steps in one
// `order.paid` job, the rest as three job types of their own); then every claim the library would
// have counted for them, as events:
//   claim      the first delivery's claim, at created_at;
//   takeover   attempt 2 of an effect that completed: its lease expired, a redelivery took it over;
//   abandoned  an abandoned receipt: the redelivery found the at-most-once step's lease expired;
//   in_flight  2% of effects: a duplicate that arrived while the step was running;
//   duplicate  duplicate_count suppressed claims, at last_duplicate_at, each with the effect's gap
//              (a duplicate due in an outage arrives at its end: no worker was there to claim it);
//   key_reuse  during the incident, a fifth of the order.paid / order.mark_paid mark-paid steps got
//              a second message reusing the key with another payload (a claim that threw);
//   violation  during the incident, half of those mark-paid steps hit the accounting entry's
//              unique key with their own insert (no claim of its own: counted, not claimed).
// Every delivery here claims once (deliveries = claims; the live demo's order.paid job claims its
// three steps per delivery), and every claim but the first delivery's and key reuse's came from a
// redelivery. The rollups are those events summed per minute (per
// hour for tenants); latency samples are drawn per claim event, so their count is the claims'.
// Why random() sits in CTE columns: a volatile function in a CTE keeps it materialised, so each
// row draws its own numbers once and the later CTEs reuse them consistently.
// Params: $1 day from, $2 day to, $3 orders, $4 tenants, $5 end, $6 outage from, $7 outage to,
// $8 run, $9 day index, $10 incident from, $11 incident to, $12 history start.
const HISTORY_SQL = `
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
         least(at + 0.3 * power(10, power(r_gap, 3) * 6) * interval '1 second', $5::timestamptz) AS due
    FROM steps
), timed AS (
  -- A duplicate that would arrive in an outage arrives when the workers are back.
  SELECT *, CASE WHEN mod(day, ${HISTORY_OUTAGE.everyDays}) = ${HISTORY_OUTAGE.onDay}
                      AND due - day_start >= ${HISTORY_OUTAGE.fromMs / 1000} * interval '1 second'
                      AND due - day_start < ${HISTORY_OUTAGE.toMs / 1000} * interval '1 second'
                 THEN least(day_start + ${HISTORY_OUTAGE.toMs / 1000} * interval '1 second', $5::timestamptz)
                 ELSE due END AS dup_at
    FROM (SELECT *, floor(extract(epoch FROM due - $12::timestamptz) / 86400)::int AS day,
                 $12::timestamptz + floor(extract(epoch FROM due - $12::timestamptz) / 86400) * interval '1 day' AS day_start
            FROM shaped) d
), effects_in AS (
  INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until, first_message_id, last_message_id,
                       outcome, error, created_at, updated_at, completed_at, duplicate_count, last_duplicate_at, max_gap_seconds, marked)
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
         CASE WHEN dups > 0 THEN dup_at END,
         CASE WHEN dups > 0 THEN extract(epoch FROM dup_at - at) END,
         true
    FROM timed
  RETURNING tenant_id, key, job_type, status, attempt, created_at, duplicate_count, last_duplicate_at, max_gap_seconds, first_message_id
), drawn AS (
  SELECT *, random() AS r_in_flight, random() AS r_drawn,
         created_at >= $10::timestamptz AND created_at < $11::timestamptz
           AND job_type IN ('order.paid', 'order.mark_paid') AND key LIKE 'mark-paid:%' AS in_incident
    FROM effects_in
), e AS (
  -- A 30-minute incident holds only a few orders at a small scale: its first mark-paid step always
  -- hits the violation, so an incident never passes without one by chance.
  SELECT *, CASE WHEN in_incident AND row_number() OVER (PARTITION BY in_incident ORDER BY created_at, key) = 1
                 THEN 0.75 ELSE r_drawn END AS r_incident
    FROM drawn
), events AS (
  SELECT tenant_id, key, job_type, created_at AS at, 'claim' AS kind, 1 AS n, NULL::float8 AS gap, first_message_id FROM e
  UNION ALL
  SELECT tenant_id, key, job_type, created_at, 'takeover', 1, NULL, first_message_id FROM e WHERE attempt = 2 AND status <> 'abandoned'
  UNION ALL
  SELECT tenant_id, key, job_type, created_at, 'abandoned', 1, NULL, first_message_id FROM e WHERE status = 'abandoned'
  UNION ALL
  SELECT tenant_id, key, job_type, created_at, 'in_flight', 1, NULL, first_message_id FROM e WHERE r_in_flight < 0.02
  UNION ALL
  SELECT tenant_id, key, job_type, last_duplicate_at, 'duplicate', duplicate_count, max_gap_seconds, first_message_id
    FROM e WHERE duplicate_count > 0
  UNION ALL
  SELECT tenant_id, key, job_type, created_at, 'key_reuse', 1, NULL, first_message_id FROM e WHERE in_incident AND r_incident < 0.2
  UNION ALL
  SELECT tenant_id, key, job_type, created_at, 'violation', 1, NULL, first_message_id FROM e WHERE in_incident AND r_incident >= 0.5
), claims AS (
  -- Latency of each claim event (its n claims alike): mostly 2.5-25 ms, a tail to 250 ms. lb is the
  -- 0-based bucket of onceboard_claim_bucket_bounds(); mid its midpoint, for claim_seconds_sum.
  SELECT minute, job_type, lb, sum(n) AS n,
         sum(n) * (ARRAY[0.0005, 0.00175, 0.00375, 0.0075, 0.0175, 0.0375, 0.075, 0.175]::float8[])[lb + 1] AS seconds
    FROM (SELECT date_trunc('minute', at) AS minute, job_type, n,
                 CASE WHEN r < 0.30 THEN 2 WHEN r < 0.75 THEN 3 WHEN r < 0.93 THEN 4 WHEN r < 0.99 THEN 5 ELSE 7 END AS lb
            FROM (SELECT *, random() AS r FROM events WHERE kind <> 'violation') x) y
   GROUP BY 1, 2, 3
), latency_rows AS (
  SELECT m.minute, m.job_type, array_agg(coalesce(c.n, 0) ORDER BY k)::bigint[] AS buckets, coalesce(sum(c.seconds), 0) AS seconds
    FROM (SELECT DISTINCT minute, job_type FROM claims) m
   CROSS JOIN generate_series(0, 14) AS k
    LEFT JOIN claims c ON c.minute = m.minute AND c.job_type = m.job_type AND c.lb = k
   GROUP BY 1, 2
), gaps AS (
  -- The bucket a gap falls in: the first bound >= gap (Prometheus le), as the library's gapBucketIndex.
  SELECT date_trunc('minute', at) AS minute, job_type,
         (SELECT count(*) FROM unnest(onceboard_gap_bucket_bounds()) AS b WHERE b < gap)::int AS gb, sum(n) AS n, sum(n * gap) AS seconds
    FROM events WHERE kind = 'duplicate'
   GROUP BY 1, 2, 3
), gap_rows AS (
  SELECT m.minute, m.job_type, array_agg(coalesce(g.n, 0) ORDER BY k)::bigint[] AS buckets, coalesce(sum(g.seconds), 0) AS seconds
    FROM (SELECT DISTINCT minute, job_type FROM gaps) m
   CROSS JOIN generate_series(0, 15) AS k
    LEFT JOIN gaps g ON g.minute = m.minute AND g.job_type = m.job_type AND g.gb = k
   GROUP BY 1, 2
), per_minute AS (
  SELECT date_trunc('minute', at) AS minute, job_type,
         sum(n) FILTER (WHERE kind <> 'violation') AS claims,
         coalesce(sum(n) FILTER (WHERE kind = 'duplicate'), 0) AS suppressed,
         coalesce(sum(n) FILTER (WHERE kind = 'in_flight'), 0) AS in_flight,
         coalesce(sum(n) FILTER (WHERE kind = 'takeover'), 0) AS takeovers,
         coalesce(sum(n) FILTER (WHERE kind = 'abandoned'), 0) AS abandoned,
         coalesce(sum(n) FILTER (WHERE kind = 'key_reuse'), 0) AS key_reuse,
         coalesce(sum(n) FILTER (WHERE kind = 'violation'), 0) AS uncaught,
         coalesce(sum(n) FILTER (WHERE kind IN ('duplicate', 'takeover', 'abandoned', 'in_flight')), 0) AS redeliveries
    FROM events GROUP BY 1, 2
), stats AS (
  INSERT INTO worker_stats_minute AS w (minute, job_type, claims, suppressed, in_flight, takeovers, abandoned, failed, key_reuse,
         uncaught_violations, deliveries, redeliveries, message_id_keys, claim_seconds_sum, gap_buckets, gap_seconds_sum, marked)
  SELECT p.minute, p.job_type, coalesce(p.claims, 0), p.suppressed, p.in_flight, p.takeovers, p.abandoned, 0, p.key_reuse,
         p.uncaught, coalesce(p.claims, 0), p.redeliveries, 0, coalesce(l.seconds, 0),
         coalesce(g.buckets, array_fill(0::bigint, ARRAY[16])), coalesce(g.seconds, 0), true
    FROM per_minute p LEFT JOIN gap_rows g USING (minute, job_type) LEFT JOIN latency_rows l USING (minute, job_type)
  ON CONFLICT (minute, job_type, marked) DO UPDATE SET
    claims = w.claims + EXCLUDED.claims, suppressed = w.suppressed + EXCLUDED.suppressed,
    in_flight = w.in_flight + EXCLUDED.in_flight, takeovers = w.takeovers + EXCLUDED.takeovers,
    abandoned = w.abandoned + EXCLUDED.abandoned, failed = w.failed + EXCLUDED.failed,
    key_reuse = w.key_reuse + EXCLUDED.key_reuse, uncaught_violations = w.uncaught_violations + EXCLUDED.uncaught_violations,
    deliveries = w.deliveries + EXCLUDED.deliveries, redeliveries = w.redeliveries + EXCLUDED.redeliveries,
    claim_seconds_sum = w.claim_seconds_sum + EXCLUDED.claim_seconds_sum,
    gap_buckets = onceboard_add_counts(w.gap_buckets, EXCLUDED.gap_buckets),
    gap_seconds_sum = w.gap_seconds_sum + EXCLUDED.gap_seconds_sum,
    updated_at = now()
  RETURNING (xmax = 0) AS created
), latency AS (
  INSERT INTO claim_latency_minute AS l (minute, job_type, buckets, marked)
  SELECT minute, job_type, buckets, true FROM latency_rows
  ON CONFLICT (minute, job_type, marked) DO UPDATE SET buckets = onceboard_add_counts(l.buckets, EXCLUDED.buckets)
  RETURNING 1
), tenant_suppressions AS (
  INSERT INTO tenant_suppressions_hour AS t (hour, tenant_id, job_type, count, marked)
  SELECT date_trunc('hour', at, 'UTC'), tenant_id, job_type, sum(n), true FROM events WHERE kind = 'duplicate' GROUP BY 1, 2, 3
  ON CONFLICT (hour, tenant_id, job_type, marked) DO UPDATE SET count = t.count + EXCLUDED.count
  RETURNING 1
), violations AS (
  INSERT INTO uncaught_violations_minute AS u (minute, job_type, constraint_name, count, marked, last_tenant_id, last_key, last_message_id)
  SELECT DISTINCT ON (date_trunc('minute', at), job_type)
         date_trunc('minute', at), job_type, 'demo_accounting_entries_entry_key',
         count(*) OVER (PARTITION BY date_trunc('minute', at), job_type), true, tenant_id, key, first_message_id
    FROM events WHERE kind = 'violation'
   ORDER BY date_trunc('minute', at), job_type, at DESC
  ON CONFLICT (minute, job_type, constraint_name, marked) DO UPDATE SET count = u.count + EXCLUDED.count,
    last_tenant_id = EXCLUDED.last_tenant_id, last_key = EXCLUDED.last_key, last_message_id = EXCLUDED.last_message_id
  RETURNING 1
), violation_keys AS (
  -- One row per violation, as the workers record them: the Violations page and the banner's groups.
  INSERT INTO uncaught_violation_keys (occurred_at, tenant_id, job_type, constraint_name, key, message_id, marked)
  SELECT at, tenant_id, job_type, 'demo_accounting_entries_entry_key', key, first_message_id, true
    FROM events WHERE kind = 'violation'
  RETURNING 1
), tenant_violations AS (
  INSERT INTO tenant_violations_hour AS t (hour, tenant_id, job_type, constraint_name, count, last_key, last_seen, marked)
  SELECT DISTINCT ON (date_trunc('hour', at, 'UTC'), tenant_id, job_type)
         date_trunc('hour', at, 'UTC'), tenant_id, job_type, 'demo_accounting_entries_entry_key',
         count(*) OVER (PARTITION BY date_trunc('hour', at, 'UTC'), tenant_id, job_type), key, at, true
    FROM events WHERE kind = 'violation'
   ORDER BY date_trunc('hour', at, 'UTC'), tenant_id, job_type, at DESC
  ON CONFLICT (hour, tenant_id, job_type, constraint_name, marked) DO UPDATE SET
    count = t.count + EXCLUDED.count,
    last_key = CASE WHEN EXCLUDED.last_seen >= t.last_seen THEN EXCLUDED.last_key ELSE t.last_key END,
    last_seen = greatest(t.last_seen, EXCLUDED.last_seen)
  RETURNING 1
)
SELECT (SELECT count(*) FROM effects_in)::int AS effects,
       (SELECT count(*) FILTER (WHERE created) FROM stats)::int AS stats,
       (SELECT count(*) FROM violations)::int AS violations,
       (SELECT count(*) FROM latency)::int AS latency,
       (SELECT count(*) FROM tenant_suppressions)::int AS tenant_suppressions,
       (SELECT count(*) FROM tenant_violations)::int AS tenant_violations,
       (SELECT count(*) FROM violation_keys)::int AS violation_keys`;

/** True when there is nothing yet: no effects and no rollups (the default trigger for a backfill). */
export async function isDatabaseEmpty(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ empty: boolean }>(
    "SELECT NOT EXISTS (SELECT 1 FROM effects) AND NOT EXISTS (SELECT 1 FROM worker_stats_minute) AS empty",
  );
  return rows[0]?.empty ?? false;
}

// What the history's effects did at the demo's provider, so that reconciling a past day finds it
// agreed: a PaymentIntent per capture, a message per receipt that completed (an abandoned receipt
// was never sent: the mailer's reconciliation says so). Same day as the effects, by their times:
// a capture is created at its order's time, a receipt 700 ms after it (HISTORY_SQL's steps).
// Params: $1 day from, $2 day to, $3 run.
const HISTORY_PROVIDER_SQL = `
WITH intents AS (
  INSERT INTO ${PROVIDER_SCHEMA}.objects (id, kind, amount, currency, status, metadata, created)
  SELECT 'pi_hist_' || md5(tenant_id || chr(1) || key), 'payment_intent', 1299, 'usd', 'succeeded',
         jsonb_build_object('onceboard_key', key, 'onceboard_tenant', tenant_id), floor(extract(epoch FROM created_at))::bigint
    FROM effects
   WHERE owner = 'history' AND key LIKE 'capture:hist-' || $3::text || '-%' AND created_at >= $1 AND created_at < $2
  ON CONFLICT DO NOTHING
  RETURNING 1
)
INSERT INTO ${PROVIDER_SCHEMA}.messages (recipient, subject, onceboard_key, onceboard_tenant, sent_at)
SELECT 'billing@' || tenant_id || '.example', 'Receipt', key, tenant_id, created_at
  FROM effects
 WHERE owner = 'history' AND key LIKE 'receipt:hist-' || $3::text || '-%' AND status = 'completed'
   AND created_at >= $1::timestamptz + interval '700 milliseconds' AND created_at < $2::timestamptz + interval '700 milliseconds'`;

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
  const { rows: providerRows } = await db.query<{ present: boolean }>(
    `SELECT to_regclass('${PROVIDER_SCHEMA}.messages') IS NOT NULL AS present`,
  );
  const withProvider = providerRows[0]?.present ?? false;
  for (let i = 0; i < days; i++) {
    const from = new Date(start.getTime() + i * DAY_MS);
    const to = new Date(Math.min(from.getTime() + DAY_MS, end.getTime()));
    if (to <= from) break;
    // One 25-minute outage every few days (no rows at all: the charts show the hole) and one
    // 30-minute incident of uncaught unique violations and key reuse, five days back.
    const outageFrom =
      i % HISTORY_OUTAGE.everyDays === HISTORY_OUTAGE.onDay ? new Date(from.getTime() + HISTORY_OUTAGE.fromMs) : new Date(0);
    const outageTo = new Date(outageFrom.getTime() + HISTORY_OUTAGE.toMs - HISTORY_OUTAGE.fromMs);
    const incidentFrom = i === Math.max(0, days - 5) ? new Date(from.getTime() + 14 * 3_600_000) : new Date(0);
    const incidentTo = new Date(incidentFrom.getTime() + 30 * 60_000);
    const fraction = (to.getTime() - from.getTime()) / DAY_MS;
    const orders = Math.max(1, Math.round(ordersPerDay * fraction));

    await db.query("BEGIN");
    try {
      const written = await db.query<{ effects: number; stats: number; violations: number }>(HISTORY_SQL, [
        from,
        to,
        orders,
        DEMO_TENANTS,
        end,
        outageFrom,
        outageTo,
        run,
        i,
        incidentFrom,
        incidentTo,
        start,
      ]);
      if (withProvider) await db.query(HISTORY_PROVIDER_SQL, [from, to, run]);
      await db.query("COMMIT");
      result.days += 1;
      result.effects += written.rows[0]?.effects ?? 0;
      result.rollupRows += written.rows[0]?.stats ?? 0;
      result.violationRows += written.rows[0]?.violations ?? 0;
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
