import type { Statement } from "../db";
import { GAP_BUCKET_BOUNDS } from "../metrics";
import { CLAIM_DURATION_BUCKETS } from "../states";

/**
 * The MySQL/MariaDB store's statements (stores/mysql.ts), one per constant with its why. The claim
 * path's decisions live in stored procedures (migrations-mysql/0001_baseline.sql, which explains
 * each): one round trip each, on MySQL 8 and MariaDB alike (no RETURNING, which MySQL lacks). Every
 * instant is written as UTC_TIMESTAMP(3) or a UTC 'YYYY-MM-DD hh:mm:ss.fff' parameter and read back
 * as text, so neither the session time zone nor the driver's `timezone` option ever applies.
 */

// One claim: onceboard_claim(tenant, key, job type, policy, owner, message id, request hash,
// lease ms, lock timeout ms, require existing, marked, own transaction).
export const CLAIM: Statement = {
  name: "onceboard_claim",
  returns: "rows",
  text: "CALL onceboard.onceboard_claim(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
};

// Many claims of one job type and policy: onceboard_claim_batch(claims JSON, job type, policy,
// lease ms, lock timeout ms, marked, own transaction); one row: `answers` and `decided`, JSON arrays
// of the claims decided set-wise and one by one.
export const CLAIM_BATCH: Statement = {
  name: "onceboard_claim_batch",
  returns: "rows",
  text: "CALL onceboard.onceboard_claim_batch(?, ?, ?, ?, ?, ?, ?)",
};

// Completions, failures and abandons: onceboard_finish(status, items JSON, own transaction); one
// row, `ours`, the 1-based positions of the claims that were still ours.
export const FINISH: Statement = {
  name: "onceboard_finish",
  returns: "rows",
  text: "CALL onceboard.onceboard_finish(?, ?, ?)",
};

// onceboard_extend_lease(tenant, key, created_at, owner, attempt, lease ms, own transaction): the new
// end, or NULL when the claim is no longer ours.
export const EXTEND_LEASE: Statement = {
  name: "onceboard_extend_lease",
  returns: "rows",
  text: "CALL onceboard.onceboard_extend_lease(?, ?, ?, ?, ?, ?, ?)",
};

// The batched duplicate bookkeeping (duplicates.ts): the counts add, so a retried flush is exact.
// Rows named by (tenant, key, created_at): a key made again after retention pruned the first is
// another effect. Entries come sorted by (tenant, key), so two workers' flushes lock shared rows in
// one order. Read-only claims made the duplicates; this is their only write.
export const APPLY_DUPLICATES: Statement = {
  name: "onceboard_apply_duplicates",
  returns: "count",
  text: `UPDATE onceboard.effects e
  JOIN JSON_TABLE(?, '$[*]' COLUMNS (
         t VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.t',
         k VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.k',
         c DATETIME(3) PATH '$.c',
         n INT PATH '$.n',
         l DATETIME(3) PATH '$.l',
         g DOUBLE PATH '$.g',
         m VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.m')) AS j
    ON e.tenant_id = j.t AND e.\`key\` = j.k AND e.created_at = j.c
   SET e.duplicate_count = e.duplicate_count + j.n,
       e.last_duplicate_at = GREATEST(COALESCE(e.last_duplicate_at, j.l), j.l),
       e.max_gap_seconds = GREATEST(COALESCE(e.max_gap_seconds, j.g), j.g),
       e.last_message_id = COALESCE(j.m, e.last_message_id)`,
};

/**
 * `column = column + the row's new value` for a JSON array of `n` counts, element by element:
 * PostgreSQL adds its bigint[] with a function; a stored function here would need SUPER (or
 * log_bin_trust_function_creators) wherever binary logging is on, so the sum is written out.
 */
function addCounts(column: string, n: number): string {
  const elements = Array.from(
    { length: n },
    (_, i) =>
      `CAST(JSON_EXTRACT(${column}, '$[${i}]') AS UNSIGNED) + CAST(JSON_EXTRACT(VALUES(${column}), '$[${i}]') AS UNSIGNED)`,
  );
  return `${column} = JSON_ARRAY(${elements.join(", ")})`;
}

const STAT_COLUMNS = [
  "claims",
  "suppressed",
  "in_flight",
  "takeovers",
  "abandoned",
  "failed",
  "key_reuse",
  "uncaught_violations",
  "deliveries",
  "redeliveries",
  "message_id_keys",
  "claim_seconds_sum",
  "gap_seconds_sum",
  "claims_beyond_retention",
] as const;

/**
 * One minute's (or hour's: `level`) counters of one job type, added to its row. The flush writes
 * the minute and the hour, the levels PostgreSQL's triggers keep; the 10-minute and day levels are
 * read as sums of these. VALUES() names the row's new values (MariaDB has no row alias; MySQL 8
 * still takes VALUES() there).
 */
function upsertStats(level: "minute" | "hour"): Statement {
  const columns = [level, "job_type", "marked", ...STAT_COLUMNS, "gap_buckets", "updated_at"];
  return {
    name: `onceboard_rollup_stats_${level}`,
    returns: "count",
    text: `INSERT INTO onceboard.worker_stats_${level} (${columns.join(", ")})
VALUES (${columns.map((c) => (c === "updated_at" ? "UTC_TIMESTAMP(3)" : "?")).join(", ")})
ON DUPLICATE KEY UPDATE ${STAT_COLUMNS.map((c) => `${c} = ${c} + VALUES(${c})`).join(", ")},
  ${addCounts("gap_buckets", GAP_BUCKET_BOUNDS.length + 1)}, updated_at = UTC_TIMESTAMP(3)`,
  };
}

export const UPSERT_STATS_MINUTE = upsertStats("minute");
export const UPSERT_STATS_HOUR = upsertStats("hour");
/** The order of upsertStats' counter parameters, after (time, job type, marked). */
export const STAT_PARAMETERS = STAT_COLUMNS;

function upsertLatency(level: "minute" | "hour"): Statement {
  return {
    name: `onceboard_rollup_latency_${level}`,
    returns: "count",
    text: `INSERT INTO onceboard.claim_latency_${level} (${level}, job_type, marked, buckets) VALUES (?, ?, ?, ?)
ON DUPLICATE KEY UPDATE ${addCounts("buckets", CLAIM_DURATION_BUCKETS.length + 1)}`,
  };
}

export const UPSERT_LATENCY_MINUTE = upsertLatency("minute");
export const UPSERT_LATENCY_HOUR = upsertLatency("hour");

// The last occurrence's key replaces the row's when the flush knows one (it no longer does: each
// key is its own row of uncaught_violation_keys, violations.ts). Every IF reads VALUES(), the new
// row, so the order of the assignments does not matter here.
export const UPSERT_VIOLATIONS: Statement = {
  name: "onceboard_rollup_violations",
  returns: "count",
  text: `INSERT INTO onceboard.uncaught_violations_minute (minute, job_type, constraint_name, marked, count, last_tenant_id, last_key,
  last_message_id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON DUPLICATE KEY UPDATE
  last_message_id = IF(VALUES(last_key) IS NULL, last_message_id, VALUES(last_message_id)),
  count = count + VALUES(count),
  last_tenant_id = COALESCE(VALUES(last_tenant_id), last_tenant_id),
  last_key = COALESCE(VALUES(last_key), last_key)`,
};

export const UPSERT_TENANT_SUPPRESSIONS: Statement = {
  name: "onceboard_rollup_tenant_suppressions",
  returns: "count",
  text: `INSERT INTO onceboard.tenant_suppressions_hour (hour, tenant_id, job_type, marked, count) VALUES (?, ?, ?, ?, ?)
ON DUPLICATE KEY UPDATE count = count + VALUES(count)`,
};

// Left to right: last_key compares the new last_seen with the row's before last_seen is assigned.
export const UPSERT_TENANT_VIOLATIONS: Statement = {
  name: "onceboard_rollup_tenant_violations",
  returns: "count",
  text: `INSERT INTO onceboard.tenant_violations_hour (hour, tenant_id, job_type, constraint_name, marked, count, last_key, last_seen)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON DUPLICATE KEY UPDATE
  count = count + VALUES(count),
  last_key = IF(VALUES(last_seen) >= last_seen, VALUES(last_key), last_key),
  last_seen = GREATEST(last_seen, VALUES(last_seen))`,
};

// A row per delivery (the key page reads a key's rows by delivery_timeline_key_idx). (chunk_id,
// seq) with delivered_at is the primary key: a flush retried after a lost reply writes each
// delivery once; the no-op update is how a duplicate is skipped without INSERT IGNORE, which would
// also turn a NOT NULL or CHECK failure into a warning.
export const INSERT_TIMELINE: Statement = {
  name: "onceboard_insert_timeline",
  returns: "count",
  text: `INSERT INTO onceboard.delivery_timeline (delivered_at, chunk_id, seq, tenant_id, \`key\`, job_type, answer, message_id,
  delivery_attempt, effect_attempt, claim_ms, effect_created_at, worker_id, marked)
SELECT j.d, j.c, j.s, j.t, j.k, j.jt, j.a, j.m, j.da, j.ea, j.ms, j.ec, ?, ?
  FROM JSON_TABLE(?, '$[*]' COLUMNS (
         d DATETIME(3) PATH '$.d',
         c CHAR(36) PATH '$.c',
         s INT PATH '$.s',
         t VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.t',
         k VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.k',
         jt VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.j',
         a VARCHAR(16) PATH '$.a',
         m VARCHAR(1000) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$.m',
         da INT PATH '$.da',
         ea INT PATH '$.ea',
         ms DOUBLE PATH '$.ms',
         ec DATETIME(3) PATH '$.ec')) AS j
ON DUPLICATE KEY UPDATE seq = delivery_timeline.seq`,
};

// The violation's id makes an insert retried after a lost reply a no-op (without INSERT IGNORE).
export const INSERT_VIOLATION: Statement = {
  name: "onceboard_record_uncaught_violation",
  returns: "count",
  text: `INSERT INTO onceboard.uncaught_violation_keys (id, occurred_at, tenant_id, job_type, constraint_name, \`key\`, message_id,
  message, worker_id, marked)
VALUES (?, UTC_TIMESTAMP(3), ?, ?, ?, ?, ?, ?, ?, ?)
ON DUPLICATE KEY UPDATE id = id`,
};

export const READ_RETENTION: Statement = {
  name: "onceboard_read_retention",
  returns: "rows",
  text: "SELECT retention_days FROM onceboard.retention_settings WHERE id = 1",
};

// Registration and heartbeat in one upsert: the row exists exactly while the worker beats.
export const BEAT: Statement = {
  name: "onceboard_upsert_worker",
  returns: "count",
  text: `INSERT INTO onceboard.worker_registrations (worker_id, max_retry_window_seconds, host, pid, ttl_seconds, started_at, heartbeat_at)
VALUES (?, ?, ?, ?, ?, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))
ON DUPLICATE KEY UPDATE max_retry_window_seconds = VALUES(max_retry_window_seconds), ttl_seconds = VALUES(ttl_seconds),
  heartbeat_at = VALUES(heartbeat_at)`,
};

export const UNREGISTER: Statement = {
  name: "onceboard_delete_worker",
  returns: "count",
  text: "DELETE FROM onceboard.worker_registrations WHERE worker_id = ?",
};

// A start recorded once: a second registration from the same process (two createEffects) meets the
// primary key and changes nothing (a no-op update, not INSERT IGNORE, which would hide other errors).
export const RECORD_START: Statement = {
  name: "onceboard_insert_worker_start",
  returns: "count",
  text: `INSERT INTO onceboard.worker_starts (worker_name, process_started_at, host, pid, worker_id, recorded_at)
VALUES (?, ?, ?, ?, ?, UTC_TIMESTAMP(3))
ON DUPLICATE KEY UPDATE worker_name = worker_name`,
};

// The name's starts older than a month: the table holds a month of starts per worker without a maintenance step.
export const PRUNE_STARTS: Statement = {
  name: "onceboard_prune_worker_starts",
  returns: "count",
  text: "DELETE FROM onceboard.worker_starts WHERE worker_name = ? AND process_started_at < UTC_TIMESTAMP(3) - INTERVAL 30 DAY",
};
