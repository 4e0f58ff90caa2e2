import type { Sql, Statement } from "../db";
import { DELETE_WORKER, INSERT_WORKER_START, READ_SETTINGS, UPSERT_WORKER } from "../maintenance-sql";
import type {
  StatsRollup,
  TenantSuppressionRollup,
  TenantViolationRollup,
  TimelineChunk,
  ViolationRecord,
  ViolationRollup,
  WorkerBeat,
  WorkerStart,
} from "../store";

/**
 * PostgreSQL's bookkeeping statements (the rollups, the delivery timeline, uncaught violations, the
 * worker registry): what the store's background writes run on one server and on Citus alike.
 */

// One upsert per (minute, job type) per flush; counters add up, gap buckets add element-wise
// (onceboard_add_counts). `marked` (options.marked) is part of every rollup row's key: a marked
// workload's counts never share a row with others', so deleting the marked rows
// deletes exactly them, and the triggers take them out of the coarser levels.
const UPSERT_STATS: Statement = {
  name: "onceboard_rollup_stats_v4",
  returns: "count",
  text: `INSERT INTO onceboard.worker_stats_minute AS w (minute, job_type, claims, suppressed, in_flight, takeovers, abandoned, failed,
       key_reuse, uncaught_violations, deliveries, redeliveries, message_id_keys, claim_seconds_sum, gap_buckets,
       gap_seconds_sum, marked, updated_at, claims_beyond_retention)
VALUES ($1::timestamptz, $2::text, $3::bigint, $4::bigint, $5::bigint, $6::bigint, $7::bigint, $8::bigint, $9::bigint,
        $10::bigint, $11::bigint, $12::bigint, $13::bigint, $14::float8, $15::bigint[], $16::float8, $17::boolean, now(),
        $18::bigint)
ON CONFLICT (minute, job_type, marked) DO UPDATE SET
  claims = w.claims + EXCLUDED.claims,
  suppressed = w.suppressed + EXCLUDED.suppressed,
  in_flight = w.in_flight + EXCLUDED.in_flight,
  takeovers = w.takeovers + EXCLUDED.takeovers,
  abandoned = w.abandoned + EXCLUDED.abandoned,
  failed = w.failed + EXCLUDED.failed,
  key_reuse = w.key_reuse + EXCLUDED.key_reuse,
  uncaught_violations = w.uncaught_violations + EXCLUDED.uncaught_violations,
  deliveries = w.deliveries + EXCLUDED.deliveries,
  redeliveries = w.redeliveries + EXCLUDED.redeliveries,
  message_id_keys = w.message_id_keys + EXCLUDED.message_id_keys,
  claim_seconds_sum = w.claim_seconds_sum + EXCLUDED.claim_seconds_sum,
  gap_buckets = onceboard.onceboard_add_counts(w.gap_buckets, EXCLUDED.gap_buckets),
  gap_seconds_sum = w.gap_seconds_sum + EXCLUDED.gap_seconds_sum,
  updated_at = now(),
  claims_beyond_retention = w.claims_beyond_retention + EXCLUDED.claims_beyond_retention`,
};

const UPSERT_VIOLATIONS: Statement = {
  name: "onceboard_rollup_violations_v4",
  returns: "count",
  text: `INSERT INTO onceboard.uncaught_violations_minute AS u
  (minute, job_type, constraint_name, count, marked, last_tenant_id, last_key, last_message_id)
VALUES ($1::timestamptz, $2::text, $3::text, $4::bigint, $5::boolean, $6::text, $7::text, $8::text)
ON CONFLICT (minute, job_type, constraint_name, marked) DO UPDATE SET
  count = u.count + EXCLUDED.count,
  last_tenant_id = coalesce(EXCLUDED.last_tenant_id, u.last_tenant_id),
  last_key = coalesce(EXCLUDED.last_key, u.last_key),
  last_message_id = CASE WHEN EXCLUDED.last_key IS NULL THEN u.last_message_id ELSE EXCLUDED.last_message_id END`,
};

const UPSERT_LATENCY: Statement = {
  name: "onceboard_rollup_latency_v3",
  returns: "count",
  text: `INSERT INTO onceboard.claim_latency_minute AS l (minute, job_type, buckets, marked)
VALUES ($1::timestamptz, $2::text, $3::bigint[], $4::boolean)
ON CONFLICT (minute, job_type, marked) DO UPDATE SET buckets = onceboard.onceboard_add_counts(l.buckets, EXCLUDED.buckets)`,
};

const UPSERT_TENANT_SUPPRESSIONS: Statement = {
  name: "onceboard_rollup_tenant_suppressions_v3",
  returns: "count",
  text: `INSERT INTO onceboard.tenant_suppressions_hour AS t (hour, tenant_id, job_type, count, marked)
VALUES ($1::timestamptz, $2::text, $3::text, $4::bigint, $5::boolean)
ON CONFLICT (hour, tenant_id, job_type, marked) DO UPDATE SET count = t.count + EXCLUDED.count`,
};

const UPSERT_TENANT_VIOLATIONS: Statement = {
  name: "onceboard_rollup_tenant_violations_v3",
  returns: "count",
  text: `INSERT INTO onceboard.tenant_violations_hour AS t (hour, tenant_id, job_type, constraint_name, count, last_key, last_seen, marked)
VALUES ($1::timestamptz, $2::text, $3::text, $4::text, $5::bigint, $6::text, $7::timestamptz, $8::boolean)
ON CONFLICT (hour, tenant_id, job_type, constraint_name, marked) DO UPDATE SET
  count = t.count + EXCLUDED.count,
  last_key = CASE WHEN EXCLUDED.last_seen >= t.last_seen THEN EXCLUDED.last_key ELSE t.last_key END,
  last_seen = greatest(t.last_seen, EXCLUDED.last_seen)`,
};
// Why chunks and not a row per delivery (migration 0010 says more): one heap row and one index
// entry per delivery cost the cheap claim paths (batched claims, duplicates) a fifth to a third of
// their rate. A chunk is one row of parallel arrays; chunk_id names it, so a flush retried after a
// lost reply writes it once. JSON rather than array parameters: every driver passes one text.
const INSERT_CHUNKS: Statement = {
  name: "onceboard_insert_delivery_chunks_v2",
  returns: "count",
  text: `INSERT INTO onceboard.delivery_timeline
       (first_at, last_at, chunk_id, worker_id, marked, later_keys, tenants, keys, job_types, delivered_at, answers,
        message_ids, delivery_attempts, effect_attempts, claim_ms, effect_created_at)
SELECT d.first_at, d.last_at, d.chunk_id, $2::text, $3::boolean, d.later_keys, d.tenants, d.keys, d.job_types,
       d.delivered_at, d.answers, d.message_ids, d.delivery_attempts, d.effect_attempts, d.claim_ms, d.effect_created_at
  FROM jsonb_to_recordset($1::jsonb)
       AS d(first_at timestamptz, last_at timestamptz, chunk_id uuid, later_keys text[], tenants text[], keys text[],
            job_types text[], delivered_at timestamptz[], answers text[], message_ids text[], delivery_attempts integer[],
            effect_attempts integer[], claim_ms real[], effect_created_at timestamptz[])
    ON CONFLICT DO NOTHING`,
};

const INSERT_VIOLATION: Statement = {
  name: "onceboard_record_uncaught_violation_v2",
  returns: "count",
  text: `INSERT INTO onceboard.uncaught_violation_keys (id, tenant_id, job_type, constraint_name, key, message_id, message, worker_id, marked)
VALUES ($1::uuid, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text, $9::boolean)
ON CONFLICT (id) DO NOTHING`,
};

const READ_RETENTION: Statement = { name: "onceboard_read_retention", text: READ_SETTINGS, returns: "rows" };
const BEAT: Statement = { name: "onceboard_upsert_worker", text: UPSERT_WORKER, returns: "count" };
const UNREGISTER: Statement = { name: "onceboard_delete_worker", text: DELETE_WORKER, returns: "count" };
const RECORD_START: Statement = { name: "onceboard_insert_worker_start", text: INSERT_WORKER_START, returns: "count" };

/** A count array as PostgreSQL's bigint[] literal. */
const counts = (values: readonly number[]) => `{${values.join(",")}}`;
const iso = (ms: number) => new Date(ms).toISOString();

export async function addStats(sql: Sql, r: StatsRollup, marked: boolean): Promise<void> {
  const c = r.counts;
  await sql.run(UPSERT_STATS, [
    iso(r.minute),
    r.jobType,
    c.claims,
    c.suppressed,
    c.inFlight,
    c.takeovers,
    c.abandoned,
    c.failed,
    c.keyReuse,
    c.uncaughtViolations,
    c.deliveries,
    c.redeliveries,
    c.messageIdKeys,
    c.claimSecondsSum,
    counts(r.gapBuckets),
    c.gapSecondsSum,
    marked,
    c.claimsBeyondRetention,
  ]);
  if (c.claims > 0) await sql.run(UPSERT_LATENCY, [iso(r.minute), r.jobType, counts(r.claimBuckets), marked]);
}

export async function addViolationCounts(sql: Sql, r: ViolationRollup, marked: boolean): Promise<void> {
  await sql.run(UPSERT_VIOLATIONS, [
    iso(r.minute),
    r.jobType,
    r.constraint,
    r.count,
    marked,
    r.last?.tenant ?? null,
    r.last?.key ?? null,
    r.last?.messageId ?? null,
  ]);
}

export async function addTenantSuppressions(sql: Sql, r: TenantSuppressionRollup, marked: boolean): Promise<void> {
  await sql.run(UPSERT_TENANT_SUPPRESSIONS, [iso(r.hour), r.tenant, r.jobType, r.count, marked]);
}

export async function addTenantViolations(sql: Sql, r: TenantViolationRollup, marked: boolean): Promise<void> {
  await sql.run(UPSERT_TENANT_VIOLATIONS, [
    iso(r.hour),
    r.tenant,
    r.jobType,
    r.constraint,
    r.count,
    r.lastKey,
    iso(r.lastSeen),
    marked,
  ]);
}

export async function insertTimeline(
  sql: Sql,
  chunks: readonly TimelineChunk[],
  workerId: string,
  marked: boolean,
): Promise<void> {
  await sql.run(INSERT_CHUNKS, [JSON.stringify(chunks), workerId, marked]);
}

export async function insertViolation(sql: Sql, v: ViolationRecord): Promise<void> {
  await sql.run(INSERT_VIOLATION, [v.id, v.tenant, v.jobType, v.constraint, v.key, v.messageId, v.message, v.workerId, v.marked]);
}

export async function readRetentionDays(sql: Sql): Promise<number | null> {
  const { rows } = await sql.run<{ retention_days: number }>(READ_RETENTION, []);
  return rows[0]?.retention_days ?? null;
}

export async function beat(sql: Sql, w: WorkerBeat): Promise<void> {
  await sql.run(BEAT, [w.workerId, w.maxRetryWindowSeconds, w.host, w.pid, w.ttlSeconds, null]);
}

export async function unregister(sql: Sql, workerId: string): Promise<void> {
  await sql.run(UNREGISTER, [workerId]);
}

export async function recordStart(sql: Sql, s: WorkerStart): Promise<void> {
  await sql.run(RECORD_START, [s.workerName, s.processStartedAt, s.host, s.pid, s.workerId]);
}
