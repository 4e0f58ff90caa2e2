import { randomBytes } from "node:crypto";
import { formatCountOf, formatUtcDay } from "../format";
import type { Queryable } from "./db-types";
import { COMBINED_ORDER_SHARE, DEMO_TENANTS, type DemoSettings, demoSettingsSchema } from "./settings";
import { PROVIDER_SCHEMA } from "./stripe-storage";

/**
 * Backfills weeks of demo history so the gap, retention and trend views have data on a fresh
 * machine, at the live demo's own rate and mix (its settings: orders per second, the share run as
 * one order.paid job, duplicates, replays, crashes, violations), so a chart over a day or a week is
 * one level line running into the live minutes, not a flat line with a wall at its right edge: effects (with
 * duplicates whose gaps span seconds to days, takeovers, abandoned receipts), an outage (minutes
 * with no rows at all) and an incident of uncaught unique violations and key reuse. The rollups
 * are not drawn on their own: they are counted from the effect rows the same statement writes,
 * claim by claim as the worker library counts them (see HISTORY_SQL), so the Overview's claims,
 * suppressions, gaps, tenants and violations agree with the effects. Every rollup row is marked
 * (marked is part of each rollup table's key), so demo:reset removes exactly the history's counts.
 * Days are written newest first, one statement and transaction each, so progress is visible and an
 * interrupted backfill leaves whole days. The last HISTORY_EFFECTS_MS keep their effect rows; the days
 * before are in the rollups and the violation rows only, as once retention has pruned their effects.
 */
interface HistoryOptions {
  spanMs: number;
  /** The live demo's settings the history follows (rate and faults); default the demo's defaults. */
  settings?: DemoSettings;
  /** Orders per tenant per day instead of the settings' rate (tests keep a history small). */
  ordersPerDay?: number;
  /**
   * The most recent span whose effect rows are written (default HISTORY_EFFECTS_MS); the days
   * before it are counted into the rollups and the violation rows only, as they stand once
   * retention has pruned a day's effects. Whole days: a day reaching into the span keeps its rows.
   */
  effectsSpanMs?: number;
  now?: Date;
  onProgress?: (line: string) => void;
}

interface HistoryResult {
  days: number;
  /** The days written with their effect rows (the rest are in the rollups only). */
  effectDays: number;
  effects: number;
  /** worker_stats_minute rows the backfill created (a later day's duplicates may add to a row made earlier). */
  rollupRows: number;
  violationRows: number;
}

const DAY_MS = 86_400_000;

/**
 * How far back the history keeps its effect rows by default: four days, so the late duplicates
 * (gaps past the three-day retry window) the gap view charts are also effects it lists. At the
 * live rate a day of effects is about half a million rows (~300 MB with the provider's objects):
 * a fortnight of them would be 4 GB for a demo, most of it soon past the 7-day retention.
 */
export const HISTORY_EFFECTS_MS = 4 * DAY_MS;

/** Orders per tenant per day at the live demo's rate (settings.rate orders per second, spread over the tenants). */
export function historyOrdersPerDay(settings: DemoSettings): number {
  return Math.max(1, Math.round((settings.rate * DAY_MS) / 1000 / DEMO_TENANTS.length));
}

/**
 * The history's per-order and per-step chances, from the live demo's settings (HISTORY_SQL's $13,
 * in this order): what the producer and the workers' faults do to an order, drawn once per row
 * instead of happening. A re-published or replayed copy of an order's first job reaches each of
 * its three steps (a redelivered capture job publishes its chained jobs again), a concurrent copy
 * only the first (lib/demo/demo.test.ts compares the rates with a live run); a long-tail redelivery
 * (minutes to days later: a dead-letter replay, a broker's own retry) is what gives the gap and
 * retention views their late duplicates, which the live minutes cannot.
 */
export function historyShape(settings: DemoSettings): number[] {
  return [
    COMBINED_ORDER_SHARE,
    settings.concurrentDuplicates,
    settings.republishes,
    settings.lateReplays,
    settings.lateReplayMinSeconds,
    Math.max(settings.lateReplayMinSeconds, settings.lateReplayMaxSeconds),
    // A crashed or slow attempt's lease expires and a redelivery takes the claim over.
    Math.min(1, settings.crash + settings.slow),
    // Half the receipt's crash opportunities fall between its claim and its completion.
    settings.crash / 2,
    settings.violation,
    settings.keyReuse,
    // One concurrent copy in ten arrives while the first still runs (an in-flight wait).
    settings.concurrentDuplicates / 10,
    LONG_TAIL_REDELIVERIES,
  ];
}

/** The share of steps redelivered minutes to days later (see historyShape). */
const LONG_TAIL_REDELIVERIES = 0.02;

/** Where history's outages fall: day k (from the start) with k % 4 = 2, 02:10 to 02:35 after the day's start. */
export const HISTORY_OUTAGE = { everyDays: 4, onDay: 2, fromMs: 130 * 60_000, toMs: 155 * 60_000 };

// One statement per day. Effects at the live demo's rate and mix (historyShape: the settings' share
// of orders run as one `order.paid` job, the rest as three job types of their own; the copies and
// faults they draw); then every claim the library would have counted for them, as events:
//   claim      the first delivery's claim, at created_at;
//   takeover   attempt 2 of an effect that completed: its lease expired, a redelivery took it over;
//   abandoned  an abandoned receipt: the redelivery found the at-most-once step's lease expired;
//   in_flight  a duplicate that arrived while the step was running;
//   duplicate  duplicate_count suppressed claims, at last_duplicate_at, each with the effect's gap
//              (a duplicate due in an outage arrives at its end: no worker was there to claim it);
//   key_reuse  a capture whose key a buggy producer re-sent with another amount (a claim that threw),
//              at the settings' rate; during the incident, a fifth of the mark-paid steps;
//   violation  a mark-paid step whose accounting entry hit its unique key (no claim of its own:
//              counted, not claimed), at the settings' rate; during the incident, half of them.
// Every delivery here claims once (deliveries = claims; the live demo's order.paid job claims its
// three steps per delivery), and every claim but the first delivery's and key reuse's came from a
// redelivery. The rollups are those events summed per minute (per
// hour for tenants); latency samples are drawn per claim event, so their count is the claims'.
// Why random() sits in CTE columns: a volatile function in a CTE keeps it materialised, so each
// row draws its own numbers once and the later CTEs reuse them consistently.
// Params: $1 day from, $2 day to, $3 orders per tenant, $4 tenants, $5 end, $6 outage from, $7 outage to,
// $8 run, $9 day index, $10 incident from, $11 incident to, $12 history start, $13 historyShape(),
// $14 whether the day keeps its effect rows (else only what the rollups and the violation rows count).
const HISTORY_SQL = `
WITH p AS (
  SELECT s[1] AS p_combined, s[2] AS p_concurrent, s[3] AS p_republish, s[4] AS p_replay, s[5] AS p_replay_min,
         s[6] AS p_replay_max, s[7] AS p_takeover, s[8] AS p_abandon, s[9] AS p_violation, s[10] AS p_key_reuse,
         s[11] AS p_in_flight, s[12] AS p_tail
    FROM (SELECT $13::float8[] AS s) x
), orders AS (
  -- Per order, as the producer draws them: which queue, and the copies its first job gets.
  SELECT t.tenant, g.n,
         $1::timestamptz + (g.n + random()) * (($2::timestamptz - $1::timestamptz) / $3::int) AS at,
         random() < p_combined AS combined,
         (random() < p_concurrent)::int AS concurrent, (random() < p_republish)::int AS republished,
         (random() < p_replay)::int AS replayed, random() AS r_copy
    FROM p, unnest($4::text[]) AS t(tenant), generate_series(0, $3::int - 1) AS g(n)
), steps AS (
  SELECT o.tenant, o.n, o.combined, o.at + s.ord * interval '350 milliseconds' AS at, s.step, s.policy,
         o.concurrent, o.republished, o.replayed, o.r_copy,
         random() AS r_status, random() AS r_tail, random() AS r_gap, random() AS r_attempt
    FROM orders o
   CROSS JOIN (VALUES ('capture', 'external', 0), ('mark-paid', 'transactional', 1), ('receipt', 'at_most_once', 2)) AS s(step, policy, ord)
   WHERE o.at < $5::timestamptz AND NOT (o.at >= $6::timestamptz AND o.at < $7::timestamptz)
), shaped AS (
  -- A re-published or replayed copy reaches every step; a concurrent copy is suppressed once, at
  -- the capture it meets in flight (the live demo's rollups count it so: one suppression, not
  -- three); a step's long-tail redelivery comes on top. The effect keeps its latest copy's gap: a
  -- replay's (the settings' minutes), a re-publish's (2-20 s), a concurrent copy's (under a
  -- second), a long tail's (1 min to 3.5 d, log-uniform).
  SELECT steps.*, p_takeover, p_abandon,
         CASE WHEN step = 'capture' THEN concurrent ELSE 0 END + republished + replayed + (r_tail < p_tail)::int AS dups,
         least(at + CASE WHEN r_tail < p_tail THEN 60 * power(10, r_gap * 3.7)
                         WHEN replayed = 1 THEN p_replay_min + r_copy * (p_replay_max - p_replay_min)
                         WHEN republished = 1 THEN 2 + r_copy * 18
                         ELSE 0.05 + r_copy * 0.45 END * interval '1 second', $5::timestamptz) AS due
    FROM steps, p
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
), rows_out AS (
  SELECT tenant AS tenant_id,
         step || ':hist-' || $8::text || '-' || tenant || '-' || $9::int || '-' || n AS key,
         CASE WHEN combined THEN 'order.paid' WHEN step = 'capture' THEN 'order.capture'
              WHEN step = 'mark-paid' THEN 'order.mark_paid' ELSE 'order.receipt' END AS job_type,
         CASE WHEN step = 'receipt' AND r_status < p_abandon THEN 'abandoned' ELSE 'completed' END AS status,
         policy,
         CASE WHEN r_attempt < p_takeover THEN 2 ELSE 1 END AS attempt,
         'hist-msg-' || $8::text || '-' || tenant || '-' || $9::int || '-' || n AS first_message_id,
         'hist-msg-' || $8::text || '-' || tenant || '-' || $9::int || '-' || n || CASE WHEN dups > 0 THEN '-r' || dups ELSE '' END
           AS last_message_id,
         CASE WHEN step = 'capture' THEN jsonb_build_object('chargeId', 'ch_hist_' || md5(tenant || n || at)::text)
              WHEN step = 'mark-paid' THEN jsonb_build_object('paid', true)
              WHEN step = 'receipt' AND r_status < p_abandon THEN NULL
              ELSE jsonb_build_object('emailId', n) END AS outcome,
         CASE WHEN step = 'receipt' AND r_status < p_abandon THEN 'abandoned: lease of attempt 1 (history) expired' END AS error,
         at AS created_at,
         dups AS duplicate_count,
         CASE WHEN dups > 0 THEN dup_at END AS last_duplicate_at,
         CASE WHEN dups > 0 THEN extract(epoch FROM dup_at - at) END AS max_gap_seconds
    FROM timed
), effects_in AS (
  -- Only on the days that keep their effects ($14); before them, the rows are counted, not kept.
  INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until, first_message_id, last_message_id,
                       outcome, error, created_at, updated_at, completed_at, duplicate_count, last_duplicate_at, max_gap_seconds, marked)
  SELECT tenant_id, key, job_type, status, policy, attempt, 'history', NULL, first_message_id, last_message_id,
         outcome, error, created_at, created_at + interval '120 milliseconds', created_at + interval '120 milliseconds',
         duplicate_count, last_duplicate_at, max_gap_seconds, true
    FROM rows_out WHERE $14::boolean
  RETURNING tenant_id, key, job_type, status, attempt, created_at, duplicate_count, last_duplicate_at, max_gap_seconds, first_message_id
), counted AS (
  SELECT * FROM effects_in
  UNION ALL
  SELECT tenant_id, key, job_type, status, attempt, created_at, duplicate_count, last_duplicate_at, max_gap_seconds, first_message_id
    FROM rows_out WHERE NOT $14::boolean
), drawn AS (
  SELECT counted.*, random() < p_in_flight AS waited, random() AS r_drawn,
         key LIKE 'mark-paid:%' AND random() < p_violation AS violated,
         key LIKE 'capture:%' AND random() < p_key_reuse AS reused,
         created_at >= $10::timestamptz AND created_at < $11::timestamptz
           AND job_type IN ('order.paid', 'order.mark_paid') AND key LIKE 'mark-paid:%' AS in_incident
    FROM counted, p
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
  SELECT tenant_id, key, job_type, created_at, 'in_flight', 1, NULL, first_message_id FROM e WHERE waited
  UNION ALL
  SELECT tenant_id, key, job_type, last_duplicate_at, 'duplicate', duplicate_count, max_gap_seconds, first_message_id
    FROM e WHERE duplicate_count > 0
  UNION ALL
  SELECT tenant_id, key, job_type, created_at, 'key_reuse', 1, NULL, first_message_id FROM e
   WHERE reused OR (in_incident AND r_incident < 0.2)
  UNION ALL
  SELECT tenant_id, key, job_type, created_at, 'violation', 1, NULL, first_message_id FROM e
   WHERE violated OR (in_incident AND r_incident >= 0.5)
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

/** The terminal's line once the backfill is done: "history ready: 75,318 effects, 10,080 rollup rows over 14 days". */
export function historyReadyLine(result: HistoryResult): string {
  const kept =
    result.effectDays < result.days ? ` (effect rows kept for the last ${formatCountOf(result.effectDays, "day")})` : "";
  return `history ready: ${formatCountOf(result.effects, "effect")}, ${formatCountOf(result.rollupRows, "rollup row")} over ${formatCountOf(result.days, "day")}${kept}`;
}

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
  const settings = options.settings ?? demoSettingsSchema.parse({});
  const ordersPerDay = options.ordersPerDay ?? historyOrdersPerDay(settings);
  const shape = historyShape(settings);
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

  const result: HistoryResult = { days: 0, effectDays: 0, effects: 0, rollupRows: 0, violationRows: 0 };
  const effectsFrom = end.getTime() - (options.effectsSpanMs ?? HISTORY_EFFECTS_MS);
  const { rows: providerRows } = await db.query<{ present: boolean }>(
    `SELECT to_regclass('${PROVIDER_SCHEMA}.messages') IS NOT NULL AS present`,
  );
  const withProvider = providerRows[0]?.present ?? false;
  // Newest day first: the last day (every 24-hour chart, the effects a key search finds) is there
  // within a minute, and the week behind it fills in after.
  for (let done = 0; done < days; done++) {
    const i = days - 1 - done;
    const from = new Date(start.getTime() + i * DAY_MS);
    const to = new Date(Math.min(from.getTime() + DAY_MS, end.getTime()));
    if (to <= from) continue;
    // One 25-minute outage every few days (no rows at all: the charts show the hole) and one
    // 30-minute incident of uncaught unique violations and key reuse, five days back.
    const outageFrom =
      i % HISTORY_OUTAGE.everyDays === HISTORY_OUTAGE.onDay ? new Date(from.getTime() + HISTORY_OUTAGE.fromMs) : new Date(0);
    const outageTo = new Date(outageFrom.getTime() + HISTORY_OUTAGE.toMs - HISTORY_OUTAGE.fromMs);
    const incidentFrom = i === Math.max(0, days - 5) ? new Date(from.getTime() + 14 * 3_600_000) : new Date(0);
    const incidentTo = new Date(incidentFrom.getTime() + 30 * 60_000);
    const fraction = (to.getTime() - from.getTime()) / DAY_MS;
    const orders = Math.max(1, Math.round(ordersPerDay * fraction));
    const withEffects = to.getTime() > effectsFrom;

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
        shape,
        withEffects,
      ]);
      if (withProvider) await db.query(HISTORY_PROVIDER_SQL, [from, to, run]);
      await db.query("COMMIT");
      result.days += 1;
      if (withEffects) result.effectDays += 1;
      result.effects += written.rows[0]?.effects ?? 0;
      result.rollupRows += written.rows[0]?.stats ?? 0;
      result.violationRows += written.rows[0]?.violations ?? 0;
    } catch (error) {
      await db.query("ROLLBACK").catch(() => {});
      throw error;
    }
    progress(
      `history: day ${done + 1}/${days} (${formatUtcDay(from)}): ${formatCountOf(result.effects, "effect")}, ${formatCountOf(result.rollupRows, "rollup row")} so far`,
    );
  }
  return result;
}
