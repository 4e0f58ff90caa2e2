import { escapeIdentifier, escapeLiteral } from "pg";

/**
 * The partition manager's SQL (lib/idempotency/maintenance*.ts). One statement per constant, each
 * with its why; values are bound. Reads name their objects `onceboard.<name>` and run through
 * queryingIn() for another schema; the DDL (at the end) is built per schema by one builder per
 * statement, with names and bounds quoted there.
 */

/**
 * The session advisory lock one maintenance run holds: one runner acts across the cluster, per
 * installation. Named like the schema's objects (`<schema>.maintenance`), so two installations in
 * one database (two schemas) never wait for each other.
 */
export const maintenanceLockKey = (schema: string) => `${schema}.maintenance`;

/**
 * The transaction-level lock every partition creator of one installation takes, the startup
 * premake (sql/onceboard_ensure_partitions.sql, where the literal 'onceboard.partitions' is
 * rewritten to the schema as every object name is) included, so the two never race on the catalog.
 */
export const partitionsLockKey = (schema: string) => `${schema}.partitions`;

/** Comment put on a partition before it is detached: marks it ours to drop, even after a crash. */
export const DETACH_COMMENT_PREFIX = "onceboard:retention detach";

export const TRY_MAINTENANCE_LOCK = "SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked";
export const RELEASE_MAINTENANCE_LOCK = "SELECT pg_advisory_unlock(hashtextextended($1, 0)) AS released";
export const LOCK_PARTITIONS = "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))";

/**
 * Every partition of effects with its bounds (parsed back from the partition bound expression,
 * which prints timestamptz with their offset), the detach-pending flag of an interrupted
 * DETACH … CONCURRENTLY, and the planner's row estimate and size on disk (cheap: no scan).
 */
export const LIST_PARTITIONS = `
SELECT c.relname AS name,
       i.inhdetachpending AS detach_pending,
       (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\) TO'))[1]::timestamptz AS range_from,
       (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz AS range_to,
       greatest(c.reltuples, 0)::float8 AS estimated_rows,
       pg_total_relation_size(c.oid)::float8 AS bytes,
       coalesce(obj_description(c.oid, 'pg_class'), '') AS comment
  FROM pg_inherits i
  JOIN pg_class c ON c.oid = i.inhrelid
 WHERE i.inhparent = 'onceboard.effects'::regclass
 ORDER BY range_from NULLS FIRST, c.relname`;

/**
 * On Citus, each partition of effects is an empty table on the coordinator and its rows live in
 * shards on the workers: pg_total_relation_size reads the empty table (measured: 32 kB whatever the
 * partition holds). citus_total_relation_size sums the shards' sizes from the workers (one round
 * trip per worker). Only sent when effects is distributed: the function exists only with Citus.
 */
export const CITUS_PARTITION_BYTES = `
SELECT c.relname AS name, citus_total_relation_size(c.oid, fail_on_error := false)::float8 AS bytes
  FROM pg_inherits i
  JOIN pg_class c ON c.oid = i.inhrelid
 WHERE i.inhparent = 'onceboard.effects'::regclass`;

/**
 * The Keys index of a closed partition (issues 10 and 14): the console's per-tenant reads in time
 * order (lib/features/keys-and-effects/search-effects.ts, get-effect.ts's steps). Built by maintain() only once a
 * partition's upper bound has passed, so no claim (an INSERT into the open partition) writes an
 * entry; migration 0005 dropped the partitioned index that every partition used to inherit.
 */
export const TENANT_INDEX_SUFFIX = "_tenant_created_at_idx";
const TENANT_INDEX_SHAPE = "USING btree (tenant_id, created_at, key) INCLUDE (first_message_id, status, job_type)";

/**
 * Each attached partition's indexes of that shape, whatever their name, and whether each is valid:
 * an interrupted CREATE INDEX CONCURRENTLY leaves its index INVALID (never used by a read, still
 * written). Matched on the definition after the table name, which pg_get_indexdef prints the same
 * way the manager writes it (a unique or partial index of those columns differs there).
 */
export const LIST_TENANT_INDEXES = `
SELECT c.relname AS partition, x.relname AS index_name, ix.indisvalid AS valid
  FROM pg_inherits i
  JOIN pg_class c ON c.oid = i.inhrelid
  JOIN pg_index ix ON ix.indrelid = c.oid
  JOIN pg_class x ON x.oid = ix.indexrelid
 WHERE i.inhparent = 'onceboard.effects'::regclass
   AND substring(pg_get_indexdef(ix.indexrelid) FROM ' USING .*$') = ' ${TENANT_INDEX_SHAPE}'
 ORDER BY c.relname, x.relname`;

/** Tables we detached but did not drop yet (a crash between DETACH and DROP): ours by comment. */
export const LIST_DETACHED_ORPHANS = `
SELECT c.relname AS name
  FROM pg_class c
 WHERE c.relnamespace = (SELECT relnamespace FROM pg_class WHERE oid = 'onceboard.effects'::regclass)
   AND c.relkind = 'r' AND NOT c.relispartition
   AND obj_description(c.oid, 'pg_class') LIKE '${DETACH_COMMENT_PREFIX}%'
 ORDER BY c.relname`;

/** The one settings row; defaults when it is missing (a database whose migrations predate the settings table). */
export const READ_SETTINGS = `
SELECT retention_days, max_retry_window_days, partition_interval, premake_count
  FROM onceboard.retention_settings WHERE id = 1`;

/**
 * Live workers' declared retry windows at `$1` (the manager's clock): a row is live while its
 * heartbeat is younger than its TTL. A dead worker no longer holds partitions back.
 */
export const LIVE_WINDOWS = `
SELECT worker_id, max_retry_window_seconds, host, pid, started_at, heartbeat_at
  FROM onceboard.worker_registrations
 WHERE heartbeat_at + ttl_seconds * interval '1 second' > $1
 ORDER BY max_retry_window_seconds DESC, worker_id`;

/** Registration and heartbeat in one upsert: the row exists exactly while the worker beats. */
export const UPSERT_WORKER = `
INSERT INTO onceboard.worker_registrations (worker_id, max_retry_window_seconds, host, pid, ttl_seconds, started_at, heartbeat_at)
VALUES ($1, $2, $3, $4, $5, coalesce($6, now()), coalesce($6, now()))
ON CONFLICT (worker_id) DO UPDATE
   SET max_retry_window_seconds = excluded.max_retry_window_seconds,
       ttl_seconds = excluded.ttl_seconds,
       heartbeat_at = excluded.heartbeat_at`;

export const DELETE_WORKER = "DELETE FROM onceboard.worker_registrations WHERE worker_id = $1";

/**
 * A worker process's start, recorded once when it registers: its name across restarts, its
 * process's start time, host, pid and worker id. A second registration from one process (two
 * createEffects) records nothing more. The name's starts older than a month go in the same
 * statement, so the table holds a month of starts per worker and needs no maintenance step.
 */
export const INSERT_WORKER_START = `
WITH pruned AS (
  DELETE FROM onceboard.worker_starts WHERE worker_name = $1 AND process_started_at < now() - interval '30 days'
)
INSERT INTO onceboard.worker_starts (worker_name, process_started_at, host, pid, worker_id)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT DO NOTHING`;

/**
 * Restarts of the named workers since $2: their process starts after $2 except the first start on
 * record (a worker started once in the window has not restarted). Start times are whole seconds, so
 * a worker killed and restarted within one second shares its first start's time: the first start is
 * one row (ties broken by host and pid), never every start of that second. Several names (one
 * process with several workers) count its processes once.
 */
export const COUNT_WORKER_RESTARTS = `
WITH starts AS (
  SELECT DISTINCT process_started_at, host, pid FROM onceboard.worker_starts WHERE worker_name = ANY($1::text[])
), numbered AS (
  SELECT process_started_at, row_number() OVER (ORDER BY process_started_at, host, pid) AS n FROM starts
)
SELECT count(*)::int AS restarts FROM numbered WHERE process_started_at > $2 AND n > 1`;

export const INSERT_RUN = `
INSERT INTO onceboard.maintenance_runs (runner, trigger, started_at) VALUES ($1, $2, $3) RETURNING id::text AS id`;

export const FINISH_RUN = `
UPDATE onceboard.maintenance_runs SET finished_at = $2, result = $3, operations = $4::jsonb, error = $5 WHERE id = $1::bigint`;

/** Effects still being worked on in a partition: an in-progress claim whose lease is alive. */
export function countLiveClaimsSql(table: string): string {
  return `SELECT count(*)::int AS n FROM onceboard.${escapeIdentifier(table)} WHERE status = 'in_progress' AND lease_until > $1`;
}

// ---- The manager's DDL, built per installation: `schema` is a validated identifier (schemaNameOf),
// names and bounds are quoted here. pg-boss's plans.ts is the model: one builder per statement.

const table = (schema: string, name: string) => `${schema}.${escapeIdentifier(name)}`;
const bounds = (from: Date, to: Date) => `FROM (${escapeLiteral(from.toISOString())}) TO (${escapeLiteral(to.toISOString())})`;
const rangeCheckName = (name: string) => escapeIdentifier(`${name}_range`);

/** An empty table shaped like effects, to attach as a partition. */
export const createPartitionTable = (schema: string, name: string) =>
  `CREATE TABLE ${table(schema, name)} (LIKE ${schema}.effects INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)`;

/** A CHECK matching the bounds, so ATTACH skips its validation scan. */
export const addRangeCheck = (schema: string, name: string, from: Date, to: Date) =>
  `ALTER TABLE ${table(schema, name)} ADD CONSTRAINT ${rangeCheckName(name)} CHECK (created_at >= ${escapeLiteral(from.toISOString())} AND created_at < ${escapeLiteral(to.toISOString())})`;

export const dropRangeCheck = (schema: string, name: string) =>
  `ALTER TABLE ${table(schema, name)} DROP CONSTRAINT ${rangeCheckName(name)}`;

/** The unique index every partition carries: the claim's (tenant_id, key). */
export const createPartitionUniqueIndex = (schema: string, name: string) =>
  `CREATE UNIQUE INDEX ${escapeIdentifier(`${name}_tenant_key_uq`)} ON ${table(schema, name)} (tenant_id, key)`;

export const attachPartition = (schema: string, name: string, from: Date, to: Date) =>
  `ALTER TABLE ${schema}.effects ATTACH PARTITION ${table(schema, name)} FOR VALUES ${bounds(from, to)}`;

/** A partition's replica identity, as sql/onceboard_ensure_partitions.sql sets it (it says why). */
export const partitionReplicaIdentity = (schema: string, name: string) =>
  `ALTER TABLE ${table(schema, name)} REPLICA IDENTITY USING INDEX ${escapeIdentifier(`${name}_tenant_key_uq`)}`;

/**
 * DETACH … CONCURRENTLY, or FINALIZE for one an interrupted detach left pending; a plain DETACH
 * ("plain") when effects is distributed by Citus, which does not support CONCURRENTLY: it takes a
 * short ACCESS EXCLUSIVE lock on effects instead, bounded by the same lock_timeout.
 */
export const detachPartition = (schema: string, name: string, how: "concurrently" | "finalize" | "plain") =>
  `ALTER TABLE ${schema}.effects DETACH PARTITION ${table(schema, name)}${how === "plain" ? "" : how === "finalize" ? " FINALIZE" : " CONCURRENTLY"}`;

export const dropTable = (schema: string, name: string, ifExists = false) =>
  `DROP TABLE ${ifExists ? "IF EXISTS " : ""}${table(schema, name)}`;

/** A comment on a partition (the detach marker), or none. */
export const commentOnTable = (schema: string, name: string, comment: string | null) =>
  `COMMENT ON TABLE ${table(schema, name)} IS ${comment === null ? "NULL" : escapeLiteral(comment)}`;

/** The Keys index of a closed partition, built without blocking claims. */
export const createTenantIndex = (schema: string, partition: string, index: string) =>
  `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${escapeIdentifier(index)} ON ${table(schema, partition)} ${TENANT_INDEX_SHAPE}`;

export const dropIndexConcurrently = (schema: string, index: string) =>
  `DROP INDEX CONCURRENTLY IF EXISTS ${table(schema, index)}`;

/** Whether a partition is detach-pending (no row: it is detached). */
export const IS_DETACH_PENDING = `
SELECT i.inhdetachpending AS pending FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
 WHERE i.inhparent = 'onceboard.effects'::regclass AND c.relname = $1`;

/** A table's comment (the detach marker), by name in the library's schema. */
export const TABLE_COMMENT = "SELECT obj_description(to_regclass('onceboard.' || quote_ident($1)), 'pg_class') AS comment";

// ---- The delivery timeline's partitions (maintenance-timeline.ts): one beside each effects
// partition, with its bounds, named after it.

/** delivery_timeline_<suffix> for effects_<suffix>: the two partitions of one range read as a pair. */
export const timelinePartitionName = (effectsPartition: string) =>
  `delivery_timeline_${effectsPartition.replace(/^effects_/, "")}`;

/** Every partition of delivery_timeline with its bounds, parsed as LIST_PARTITIONS parses effects'. */
export const LIST_TIMELINE_PARTITIONS = `
SELECT c.relname AS name,
       (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\) TO'))[1]::timestamptz AS range_from,
       (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz AS range_to
  FROM pg_inherits i
  JOIN pg_class c ON c.oid = i.inhrelid
 WHERE i.inhparent = 'onceboard.delivery_timeline'::regclass
 ORDER BY range_from NULLS FIRST, c.relname`;

/**
 * A timeline partition, UNLOGGED (no WAL: migration 0010 says why). CREATE … PARTITION OF locks the
 * parent briefly; only timeline flushes and key-page reads wait.
 */
export const createTimelinePartition = (schema: string, name: string, from: Date, to: Date) =>
  `CREATE UNLOGGED TABLE IF NOT EXISTS ${table(schema, name)} PARTITION OF ${schema}.delivery_timeline FOR VALUES ${bounds(from, to)}`;
