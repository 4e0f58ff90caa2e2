import type { Queryable } from "../lib/db/types";

/**
 * Rows that fill every table of the console past the size the other seeds have, with the values
 * that were cut on a real console: long tenant and job-type names, long keys, message ids and
 * token names, 5- and 6-digit counts and amounts, and a few hundred rows wherever a list pages.
 * The browser's layout checks (e2e/phone-width.spec.ts, e2e/tables.spec.ts) read a console of
 * their own on a database with these rows on top of the other seeds, so no other test's counts move.
 * Needs effects partitions for the last FILL_DAYS_BACK days.
 */
export const FILL = {
  tenant: "northwind-logistics-emea-production-eu-west-1",
  jobType: "ledger.reconcile_quarter_close_entries_for_subsidiaries",
  /** Rows per paged list (keys, violations, findings, tokens, sessions, audit). */
  rows: 300,
  /** The drift finding whose provider amounts the finding's detail must show whole. */
  drift: {
    key: "capture:northwind-ord-2026-q4-0000017139",
    ours: 17139,
    theirs: [17139, 6054],
    objectIds: ["pi_3QxNorthwindEmeaProd0000017139a", "pi_3QxNorthwindEmeaProd0000006054b"],
  },
  /** A provider whose name is longer than any the demo has. */
  longProvider: "mailer-transactional-eu-west",
  /** Stuck claims, a set per browser check that starts a bulk release: its key prefix is its filter. */
  bulkPrefix: (variant: string) => `bulk-${variant}`,
  bulkVariants: ["390-light", "390-dark", "1440-light", "1440-dark"],
  bulkClaims: 60,
};

export const FILL_DAYS_BACK = 3;

/** The fill's keys are KEY_HEAD, a six-digit number and KEY_TAIL: longer than any demo key. */
const KEY_HEAD = "ledger-close:northwind-2026-q4-subsidiary-";
const KEY_TAIL = "-entry-batch-reconciliation-retry";
/** A message id as a Pub/Sub subscription names one, before its number. */
const MESSAGE_ID_HEAD = "projects/northwind-prod/subscriptions/ledger-close/messages/";
/** A token name as a fleet of workers names theirs, before its number. */
const TOKEN_NAME_HEAD = "ledger-close-worker-northwind-emea-production-eu-west-1-canary-";
const CONSTRAINT = "ledger_entries_subsidiary_quarter_entry_reference_key";

export async function seedFill(db: Queryable, now: Date = new Date()): Promise<void> {
  const args = { tenant: FILL.tenant, jobType: FILL.jobType, rows: FILL.rows, now: now.toISOString() };
  // Effects: every status, big duplicate counts, some gaps past the retention (Keys, Delivery gaps).
  await db.query(
    `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until, first_message_id,
                          last_message_id, outcome, error, created_at, updated_at, completed_at, duplicate_count,
                          last_duplicate_at, max_gap_seconds)
     SELECT $1, $4 || lpad(n::text, 6, '0') || $5, $2,
            (ARRAY['completed', 'failed', 'abandoned', 'in_progress'])[1 + n % 4], 'external', 1 + n % 3,
            CASE WHEN n % 4 = 3 THEN 'worker-northwind-emea-' || n END,
            CASE WHEN n % 4 = 3 THEN $6::timestamptz + interval '1 hour' END,
            $7 || (17139604237719 + n), $7 || (17139604237719 + n),
            CASE WHEN n % 4 = 0 THEN jsonb_build_object('ledgerEntryId', 'le_' || md5(n::text), 'amountCents', 1713900 + n) END,
            CASE WHEN n % 4 IN (1, 2) THEN 'the ledger service answered 503 Service Unavailable after 30 s: upstream connect error or disconnect/reset before headers' END,
            $6::timestamptz - n * interval '7 minutes', $6::timestamptz - n * interval '7 minutes',
            CASE WHEN n % 4 = 0 THEN $6::timestamptz - n * interval '7 minutes' + interval '2 seconds' END,
            (n * 4111) % 99999, $6::timestamptz - n * interval '3 minutes',
            CASE WHEN n % 5 = 0 THEN 86400 * 9 + n END
       FROM generate_series(1, $3::int) n`,
    [args.tenant, args.jobType, args.rows, KEY_HEAD, KEY_TAIL, args.now, MESSAGE_ID_HEAD],
  );
  // Stuck claims (their lease ran out), one set per bulk release a browser check starts.
  for (const variant of FILL.bulkVariants) {
    await db.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until, first_message_id,
                            created_at, updated_at)
       SELECT $1, $2 || ':northwind-2026-q4-' || lpad(n::text, 6, '0') || '-ledger-entry-stuck-after-worker-crash', $3,
              'in_progress', 'external', 1, 'worker-northwind-emea-crashed-' || n, $5::timestamptz - interval '10 minutes',
              'msg-' || $2 || '-' || n, $5::timestamptz - interval '20 minutes' - n * interval '1 second',
              $5::timestamptz - interval '20 minutes'
         FROM generate_series(1, $4::int) n`,
      [FILL.tenant, FILL.bulkPrefix(variant), FILL.jobType, FILL.bulkClaims, args.now],
    );
  }
  // An hour of the long job type's counters, in the thousands a minute (Overview: Job types, charts; gaps by job type).
  await db.query(
    `INSERT INTO worker_stats_minute (minute, job_type, claims, suppressed, deliveries, redeliveries, uncaught_violations, gap_buckets)
     SELECT date_trunc('minute', $2::timestamptz) - n * interval '1 minute', $1, 1713 + n, 723 + n, 2100 + n, 387 + n, n % 2,
            ARRAY[0, 0, 400 + n, 20, 0, 0, 0, 0, 0, 3, 0, 0, 1, 1, 0, 0]::bigint[]
       FROM generate_series(1, 60) n`,
    [FILL.jobType, args.now],
  );
  await db.query(
    `INSERT INTO tenant_suppressions_hour (hour, tenant_id, job_type, count)
     SELECT date_trunc('hour', $3::timestamptz) - n * interval '1 hour', $1, $2, 4321 + n FROM generate_series(0, 5) n`,
    [FILL.tenant, FILL.jobType, args.now],
  );
  await db.query(
    `INSERT INTO tenant_violations_hour (hour, tenant_id, job_type, constraint_name, count, last_key, last_seen)
     VALUES (date_trunc('hour', $4::timestamptz), $1, $2, $3, $5, $6, $4::timestamptz - interval '2 minutes')`,
    [FILL.tenant, FILL.jobType, CONSTRAINT, args.now, FILL.rows, `${KEY_HEAD}000001${KEY_TAIL}`],
  );
  // Uncaught violations: a page and more, each with a long message id and a long error (Violations).
  await db.query(
    `INSERT INTO uncaught_violation_keys (occurred_at, tenant_id, job_type, constraint_name, key, message_id, message, worker_id)
     SELECT $4::timestamptz - n * interval '4 minutes', $1, $2, $8, $5 || lpad(n::text, 6, '0') || $6, $7 || (17139604237719 + n),
            'duplicate key value violates unique constraint "' || $8 || '": Key (subsidiary_id, quarter, entry_reference)=(northwind-emea-' || n || ', 2026-Q4, LE-17139-' || n || ') already exists.',
            'worker-northwind-emea-' || n
       FROM generate_series(1, $3::int) n`,
    [FILL.tenant, FILL.jobType, FILL.rows, args.now, KEY_HEAD, KEY_TAIL, MESSAGE_ID_HEAD, CONSTRAINT],
  );
  await seedFillReconciliation(db, now);
  await seedFillAdmin(db, now);
  // Maintenance runs, each naming several partitions; live workers with long ids (Retention).
  await db.query(
    `INSERT INTO maintenance_runs (runner, trigger, started_at, finished_at, result, operations, error)
     SELECT 'worker-northwind-emea-production-eu-west-1-' || n, (ARRAY['schedule', 'manual'])[1 + n % 2],
            $1::timestamptz - n * interval '10 minutes', $1::timestamptz - n * interval '10 minutes' + interval '3 seconds',
            CASE WHEN n % 7 = 0 THEN 'failed' ELSE 'success' END,
            jsonb_build_array(
              jsonb_build_object('kind', 'create', 'partition', 'effects_p' || to_char($1::timestamptz + n * interval '1 day', 'YYYYMMDD'), 'result', 'ok'),
              jsonb_build_object('kind', 'detach', 'partition', 'effects_p' || to_char($1::timestamptz - (30 + n) * interval '1 day', 'YYYYMMDD'), 'result', 'ok'),
              jsonb_build_object('kind', 'drop', 'partition', 'effects_p' || to_char($1::timestamptz - (31 + n) * interval '1 day', 'YYYYMMDD'), 'result', 'ok')),
            CASE WHEN n % 7 = 0 THEN 'canceling statement due to lock timeout while detaching a partition' END
       FROM generate_series(1, 30) n`,
    [args.now],
  );
  await db.query(
    `INSERT INTO worker_registrations (worker_id, max_retry_window_seconds, host, pid, started_at, heartbeat_at, ttl_seconds)
     SELECT 'worker-northwind-emea-production-eu-west-1-ledger-close-' || md5(n::text), 259200 + n * 3600,
            'ip-10-17-139-' || n || '.eu-west-1.compute.internal', 17139 + n, $1::timestamptz - interval '1 day', $1, 86400 * 30
       FROM generate_series(1, 5) n`,
    [args.now],
  );
}

/** Runs of two providers, findings a page and more, and a drift finding whose amounts are 5 digits (Reconciliation). */
async function seedFillReconciliation(db: Queryable, now: Date): Promise<void> {
  const at = now.toISOString();
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO reconciliation_runs (provider, window_from, window_to, grace_seconds, status, trigger, requested_by,
                                      started_at, finished_at, heartbeat_at, objects_seen, effects_seen, matched, counts)
     SELECT (ARRAY['stripe', $2])[1 + n % 2], $1::timestamptz - (n + 1) * interval '1 hour', $1::timestamptz - n * interval '1 hour',
            300, 'completed', 'schedule', NULL, $1::timestamptz - n * interval '1 hour' + interval '5 minutes',
            $1::timestamptz - n * interval '1 hour' + interval '6 minutes', $1::timestamptz - n * interval '1 hour' + interval '6 minutes',
            171390 + n, 160540 + n, 160000 + n,
            jsonb_build_object('duplicated_at_provider', 1234 + n, 'missing_at_provider', 5678 + n, 'unknown_to_onceboard', 91011 + n, 'drift', 12131 + n, 'pending', 0)
       FROM generate_series(1, 24) n
     RETURNING id::text AS id`,
    [at, FILL.longProvider],
  );
  const runId = rows[0]?.id;
  await db.query(
    `INSERT INTO reconciliation_findings (identity, provider, kind, tenant_id, job_type, effect_key, provider_object_ids,
                                          ours, theirs, detail, first_run_id, last_run_id, first_seen_at, last_seen_at)
     SELECT 'fill:' || n, 'stripe', (ARRAY['duplicated_at_provider', 'missing_at_provider', 'drift'])[1 + n % 3], $1, $2,
            $3 || lpad(n::text, 6, '0') || $4, ARRAY['pi_3QxNorthwindEmeaProd' || lpad(n::text, 10, '0')],
            jsonb_build_object('key', $3 || lpad(n::text, 6, '0') || $4, 'status', 'completed', 'attempt', 1,
                               'outcome', jsonb_build_object('amount', 17139 + n), 'created_at', $6::timestamptz - n * interval '5 minutes'),
            jsonb_build_array(jsonb_build_object('id', 'pi_3QxNorthwindEmeaProd' || lpad(n::text, 10, '0'), 'amount', 17139 + n,
                                                 'currency', 'eur', 'status', 'succeeded', 'created', extract(epoch FROM $6::timestamptz)::bigint - n * 300)),
            'PaymentIntent pi_3QxNorthwindEmeaProd' || lpad(n::text, 10, '0') || ' for ' || $3 || lpad(n::text, 6, '0') || $4 || ' differs from the effect',
            $5, $5, $6::timestamptz - n * interval '5 minutes', $6::timestamptz - n * interval '5 minutes'
       FROM generate_series(1, $7::int) n`,
    [FILL.tenant, FILL.jobType, "capture:northwind-2026-q4-subsidiary-", "-settlement-batch", runId, at, FILL.rows],
  );
  const { drift } = FILL;
  await db.query(
    `INSERT INTO reconciliation_findings (identity, provider, kind, tenant_id, job_type, effect_key, provider_object_ids,
                                          ours, theirs, detail, first_run_id, last_run_id, first_seen_at, last_seen_at)
     VALUES ('fill:drift', 'stripe', 'drift', $1, 'order.capture', $2, $3, $4, $5, $6, $7, $7, $8, $8)`,
    [
      FILL.tenant,
      drift.key,
      drift.objectIds,
      JSON.stringify({
        key: drift.key,
        status: "completed",
        attempt: 1,
        outcome: { amount: drift.ours, currency: "usd", chargeId: drift.objectIds[0] },
        provider_key: `ob_${drift.key}`,
        created_at: at,
      }),
      JSON.stringify(
        drift.objectIds.map((id, i) => ({
          id,
          amount: drift.theirs[i],
          currency: "usd",
          status: "succeeded",
          created: Math.floor(now.getTime() / 1000) - 600,
        })),
      ),
      `amount differs: ${drift.ours} recorded, ${drift.theirs[1]} at the provider`,
      runId,
      at,
    ],
  );
}

/** Tokens and sessions with long names and addresses, and audit rows naming them (Tokens & sessions, Audit log). */
async function seedFillAdmin(db: Queryable, now: Date): Promise<void> {
  const at = now.toISOString();
  await db.query(
    `INSERT INTO api_tokens (name, role, tenant_id, token_hash, prefix, created_at, expires_at, last_used_at)
     SELECT $4 || lpad(n::text, 3, '0'), (ARRAY['viewer', 'operator', 'admin'])[1 + n % 3], $1, 'fill-hash-' || n, 'ob_fill' || n,
            $3::timestamptz - n * interval '1 hour', $3::timestamptz + (90 - n % 90) * interval '1 day',
            CASE WHEN n % 3 > 0 THEN $3::timestamptz - n * interval '1 minute' END
       FROM generate_series(1, $2::int) n`,
    [FILL.tenant, FILL.rows, at, TOKEN_NAME_HEAD],
  );
  await db.query(
    `INSERT INTO console_sessions (id_hash, token_id, created_at, last_seen_at, expires_at, signed_in_with, client_ip)
     SELECT 'fill-session-' || n, t.id, $2::timestamptz - n * interval '2 minutes', $2::timestamptz - n * interval '1 minute',
            $2::timestamptz + interval '1 day', (ARRAY['token', 'link'])[1 + n % 2], '2001:db8:85a3:8d3:1319:8a2e:370:' || n
       FROM generate_series(1, $1::int) n
       JOIN LATERAL (SELECT id FROM api_tokens WHERE token_hash = 'fill-hash-' || n) t ON true`,
    [FILL.rows, at],
  );
  await db.query(
    `INSERT INTO audit_log (at, actor, tenant_id, action, target, result, ip)
     SELECT $3::timestamptz - n * interval '1 minute', $6 || lpad(n::text, 3, '0'), $1,
            (ARRAY['effect.release', 'effect.read', 'finding.acknowledge'])[1 + n % 3],
            $4 || lpad(n::text, 6, '0') || $5, (ARRAY['ok', 'refused', 'not_found'])[1 + n % 3],
            '2001:db8:85a3:8d3:1319:8a2e:370:' || n
       FROM generate_series(1, $2::int) n`,
    [FILL.tenant, FILL.rows, at, KEY_HEAD, KEY_TAIL, TOKEN_NAME_HEAD],
  );
}
