import type { BatchClaimParams, ClaimParams, ClaimResultKind, ClaimRow, DbPolicy } from "../claim-sql";
import type { ClaimRef } from "../complete-sql";
import type { Sql } from "../db";
import { fromMysqlTime, toMysqlTime } from "../mysql";
import type { EffectStatus } from "../states";
import type {
  DuplicateCounts,
  DuplicatesApplied,
  Release,
  StatsRollup,
  Store,
  TenantSuppressionRollup,
  TenantViolationRollup,
  TimelineChunk,
  ViolationRecord,
  ViolationRollup,
  WorkerBeat,
  WorkerStart,
} from "../store";
import {
  APPLY_DUPLICATES,
  BEAT,
  CLAIM,
  CLAIM_BATCH,
  EXTEND_LEASE,
  FINISH,
  INSERT_TIMELINE,
  INSERT_VIOLATION,
  PRUNE_STARTS,
  READ_RETENTION,
  RECORD_START,
  STAT_PARAMETERS,
  UNREGISTER,
  UPSERT_LATENCY_HOUR,
  UPSERT_LATENCY_MINUTE,
  UPSERT_STATS_HOUR,
  UPSERT_STATS_MINUTE,
  UPSERT_TENANT_SUPPRESSIONS,
  UPSERT_TENANT_VIOLATIONS,
  UPSERT_VIOLATIONS,
} from "./mysql-sql";

/** Duplicate entries per UPDATE: bounds one statement's row locks and its JSON. */
const DUPLICATES_PER_CALL = 500;

/**
 * MySQL 8 and MariaDB 10.6+ (mysql2/promise): the same contract as stores/postgres.ts, on an
 * unpartitioned effects table whose primary key is the claim's uniqueness (migrations-mysql/
 * 0001_baseline.sql says why, and how each procedure decides). Statements run in autocommit on the
 * library's pool, where each procedure opens and commits its own READ COMMITTED transaction, or in
 * a transaction (the caller's, or one the library opened for a transactional step), which they join.
 */
export function createMysqlStore(): Store {
  return {
    engine: "mysql",
    // Nothing to learn before the first claim: one server, and every isolation level is correct.
    prepare: () => Promise.resolve(),
    claim: (sql, params) => claim(sql, params),
    claimBatch: (sql, params) => claimBatch(sql, params),
    complete: async (sql, c) => (await finish(sql, "completed", [item(c.ref, c.error, c.outcomeJson)]))[0] === true,
    completeBatch: (sql, cs) =>
      finish(
        sql,
        "completed",
        cs.map((c) => item(c.ref, c.error, c.outcomeJson)),
      ),
    fail: async (sql, r) => (await finish(sql, "failed", [item(r.ref, message(r))]))[0] === true,
    failBatch: (sql, rs) =>
      finish(
        sql,
        "failed",
        rs.map((r) => item(r.ref, message(r))),
      ),
    abandon: async (sql, r) => (await finish(sql, "abandoned", [item(r.ref, message(r))]))[0] === true,
    extendLease: (sql, ref, leaseMs) => extendLease(sql, ref, leaseMs),
    applyDuplicates: (sql, entries) => applyDuplicates(sql, entries),
    addStats,
    addViolationCounts,
    addTenantSuppressions,
    addTenantViolations,
    insertTimeline,
    insertViolation,
    readRetentionDays,
    beat,
    unregister,
    recordStart,
  };
}

interface RawClaimRow {
  result: ClaimResultKind;
  status: EffectStatus | null;
  attempt: number | string | null;
  owner: string | null;
  policy: DbPolicy | null;
  created_at: string | null;
  lease_until: string | null;
  outcome: string | null;
  error: string | null;
  gap_seconds: number | string | null;
  duplicate_count: number | string | null;
  first_message_id: string | null;
  db_now: string;
}

/** The outcome column holds JSON text (MariaDB has no JSON type; MySQL's would reorder keys). */
function parseOutcome(text: unknown): unknown {
  if (text === null || text === undefined) return null;
  return typeof text === "string" ? JSON.parse(text) : text;
}

function toClaimRow(raw: RawClaimRow): ClaimRow {
  return {
    result: raw.result,
    status: raw.status,
    attempt: Number(raw.attempt ?? 0),
    owner: raw.owner,
    policy: raw.policy,
    createdAt: fromMysqlTime(raw.created_at),
    leaseUntil: fromMysqlTime(raw.lease_until),
    outcome: parseOutcome(raw.outcome),
    error: raw.error,
    gapSeconds: raw.gap_seconds === null || raw.gap_seconds === undefined ? null : Number(raw.gap_seconds),
    duplicateCount: Number(raw.duplicate_count ?? 0),
    firstMessageId: raw.first_message_id,
    dbNow: fromMysqlTime(raw.db_now) ?? new Date(),
  };
}

const positiveMs = (ms: number) => Math.max(1, Math.round(ms));

async function claim(sql: Sql, p: ClaimParams): Promise<ClaimRow> {
  const { rows } = await sql.run<RawClaimRow>(CLAIM, [
    p.tenant,
    p.key,
    p.jobType,
    p.policy,
    p.owner,
    p.messageId,
    p.requestHash,
    positiveMs(p.leaseMs),
    positiveMs(p.lockTimeoutMs),
    p.requireExisting,
    p.marked,
    !sql.inTransaction,
  ]);
  const raw = rows[0];
  if (!raw) throw new Error("onceboard_claim returned no row");
  return toClaimRow(raw);
}

async function claimBatch(sql: Sql, p: BatchClaimParams): Promise<ClaimRow[]> {
  const claims = p.claims.map((c) => ({
    t: c.tenant,
    k: c.key,
    o: c.owner,
    m: c.messageId,
    h: c.requestHash,
    r: c.requireExisting,
  }));
  const { rows } = await sql.run<{ answers: string; decided: string }>(CLAIM_BATCH, [
    JSON.stringify(claims),
    p.jobType,
    p.policy,
    positiveMs(p.leaseMs),
    positiveMs(p.lockTimeoutMs),
    p.marked,
    !sql.inTransaction,
  ]);
  // Decided set-wise (`answers`) or by the core, key by key (`decided`): together one per claim.
  const answers = [
    ...(JSON.parse(rows[0]?.answers ?? "[]") as (RawClaimRow & { ord: number })[]),
    ...(JSON.parse(rows[0]?.decided ?? "[]") as (RawClaimRow & { ord: number })[]),
  ];
  if (answers.length !== p.claims.length) {
    throw new Error(`onceboard_claim_batch returned ${answers.length} answers for ${p.claims.length} claims`);
  }
  const out: ClaimRow[] = new Array(p.claims.length);
  for (const raw of answers) {
    if (!raw.result) throw new Error(`onceboard_claim_batch left claim ${raw.ord} undecided (${raw.status})`);
    out[raw.ord - 1] = toClaimRow(raw);
  }
  return out;
}

/** One ref as onceboard_finish reads it: {t, k, c, o, a, v, e}. */
function item(ref: ClaimRef, error: string | null, outcomeJson?: string) {
  return {
    t: ref.tenant,
    k: ref.key,
    c: toMysqlTime(ref.createdAt),
    o: ref.owner,
    a: ref.attempt,
    ...(outcomeJson === undefined ? {} : { v: outcomeJson }),
    e: error,
  };
}

const message = (r: Release) => r.message.slice(0, 2000);

/** Settles claims as `status`; which of them were still ours, by index, as read back by onceboard_finish. */
async function finish(sql: Sql, status: "completed" | "failed" | "abandoned", items: ReturnType<typeof item>[]) {
  const { rows } = await sql.run<{ ours: string }>(FINISH, [status, JSON.stringify(items), !sql.inTransaction]);
  const ours = new Set(JSON.parse(rows[0]?.ours ?? "[]") as number[]);
  return items.map((_, i) => ours.has(i + 1));
}

async function extendLease(sql: Sql, ref: ClaimRef, leaseMs: number): Promise<Date | null> {
  const { rows } = await sql.run<{ lease_until: string }>(EXTEND_LEASE, [
    ref.tenant,
    ref.key,
    toMysqlTime(ref.createdAt),
    ref.owner,
    ref.attempt,
    positiveMs(leaseMs),
    !sql.inTransaction,
  ]);
  return fromMysqlTime(rows[0]?.lease_until);
}

/** In chunks, one UPDATE after another, each committing alone: a failed chunk's entries are kept for the next flush. */
async function applyDuplicates(sql: Sql, entries: readonly DuplicateCounts[]): Promise<DuplicatesApplied[]> {
  const sorted = [...entries].sort((a, b) =>
    a.tenant_id === b.tenant_id ? (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) : a.tenant_id < b.tenant_id ? -1 : 1,
  );
  const results: DuplicatesApplied[] = [];
  for (let i = 0; i < sorted.length; i += DUPLICATES_PER_CALL) {
    const part = sorted.slice(i, i + DUPLICATES_PER_CALL);
    const json = JSON.stringify(
      part.map((e) => ({
        t: e.tenant_id,
        k: e.key,
        c: toMysqlTime(new Date(e.created_at)),
        n: e.n,
        l: toMysqlTime(new Date(e.last_at)),
        g: e.max_gap,
        m: e.last_message_id,
      })),
    );
    try {
      const { rowCount } = await sql.run(APPLY_DUPLICATES, [json]);
      results.push({ entries: part, ok: true, updated: rowCount });
    } catch (error) {
      results.push({ entries: part, ok: false, error });
    }
  }
  return results;
}

const time = (ms: number) => toMysqlTime(new Date(ms));
const HOUR = 3_600_000;

async function addStats(sql: Sql, r: StatsRollup, marked: boolean): Promise<void> {
  const c = r.counts as unknown as Record<string, number>;
  const counters = STAT_PARAMETERS.map((column) => c[COUNTER_OF[column]] ?? 0);
  const gaps = JSON.stringify(r.gapBuckets);
  await sql.run(UPSERT_STATS_MINUTE, [time(r.minute), r.jobType, marked, ...counters, gaps]);
  await sql.run(UPSERT_STATS_HOUR, [time(r.minute - (r.minute % HOUR)), r.jobType, marked, ...counters, gaps]);
  if (r.counts.claims > 0) {
    const buckets = JSON.stringify(r.claimBuckets);
    await sql.run(UPSERT_LATENCY_MINUTE, [time(r.minute), r.jobType, marked, buckets]);
    await sql.run(UPSERT_LATENCY_HOUR, [time(r.minute - (r.minute % HOUR)), r.jobType, marked, buckets]);
  }
}

/** Each worker_stats column's counter in StatCounts (rollups.ts). */
const COUNTER_OF: Record<(typeof STAT_PARAMETERS)[number], string> = {
  claims: "claims",
  suppressed: "suppressed",
  in_flight: "inFlight",
  takeovers: "takeovers",
  abandoned: "abandoned",
  failed: "failed",
  key_reuse: "keyReuse",
  uncaught_violations: "uncaughtViolations",
  deliveries: "deliveries",
  redeliveries: "redeliveries",
  message_id_keys: "messageIdKeys",
  claim_seconds_sum: "claimSecondsSum",
  gap_seconds_sum: "gapSecondsSum",
  claims_beyond_retention: "claimsBeyondRetention",
};

async function addViolationCounts(sql: Sql, r: ViolationRollup, marked: boolean): Promise<void> {
  await sql.run(UPSERT_VIOLATIONS, [
    time(r.minute),
    r.jobType,
    r.constraint,
    marked,
    r.count,
    r.last?.tenant ?? null,
    r.last?.key ?? null,
    r.last?.messageId ?? null,
  ]);
}

async function addTenantSuppressions(sql: Sql, r: TenantSuppressionRollup, marked: boolean): Promise<void> {
  await sql.run(UPSERT_TENANT_SUPPRESSIONS, [time(r.hour), r.tenant, r.jobType, marked, r.count]);
}

async function addTenantViolations(sql: Sql, r: TenantViolationRollup, marked: boolean): Promise<void> {
  await sql.run(UPSERT_TENANT_VIOLATIONS, [
    time(r.hour),
    r.tenant,
    r.jobType,
    r.constraint,
    marked,
    r.count,
    r.lastKey,
    time(r.lastSeen),
  ]);
}

/** ISO text (a chunk's instants) as a DATETIME(3) literal. */
const isoToMysql = (iso: string | null) => (iso === null ? null : iso.slice(0, 23).replace("T", " "));

/**
 * The chunks' deliveries as rows: element i of each column, or its one element when the chunk's
 * deliveries share it; effect_created_at is delivered_at when the chunk leaves it empty (each
 * delivery met the effect it created).
 */
async function insertTimeline(sql: Sql, chunks: readonly TimelineChunk[], workerId: string, marked: boolean): Promise<void> {
  const rows: Record<string, unknown>[] = [];
  for (const c of chunks) {
    const at = <T>(column: readonly T[], i: number): T => (column.length === 1 ? column[0] : column[i]) as T;
    for (let i = 0; i < c.keys.length; i++) {
      const delivered = at(c.delivered_at, i);
      rows.push({
        d: isoToMysql(delivered),
        c: c.chunk_id,
        s: i,
        t: at(c.tenants, i),
        k: c.keys[i],
        j: at(c.job_types, i),
        a: at(c.answers, i),
        m: at(c.message_ids, i),
        da: at(c.delivery_attempts, i),
        ea: at(c.effect_attempts, i),
        ms: at(c.claim_ms, i),
        ec: isoToMysql(c.effect_created_at.length === 0 ? delivered : at(c.effect_created_at, i)),
      });
    }
  }
  await sql.run(INSERT_TIMELINE, [workerId, marked, JSON.stringify(rows)]);
}

async function insertViolation(sql: Sql, v: ViolationRecord): Promise<void> {
  await sql.run(INSERT_VIOLATION, [v.id, v.tenant, v.jobType, v.constraint, v.key, v.messageId, v.message, v.workerId, v.marked]);
}

async function readRetentionDays(sql: Sql): Promise<number | null> {
  const { rows } = await sql.run<{ retention_days: number }>(READ_RETENTION, []);
  return rows[0] ? Number(rows[0].retention_days) : null;
}

async function beat(sql: Sql, w: WorkerBeat): Promise<void> {
  await sql.run(BEAT, [w.workerId, w.maxRetryWindowSeconds, w.host, w.pid, w.ttlSeconds]);
}

async function unregister(sql: Sql, workerId: string): Promise<void> {
  await sql.run(UNREGISTER, [workerId]);
}

async function recordStart(sql: Sql, s: WorkerStart): Promise<void> {
  await sql.run(PRUNE_STARTS, [s.workerName]);
  await sql.run(RECORD_START, [s.workerName, toMysqlTime(s.processStartedAt), s.host, s.pid, s.workerId]);
}
