import { type AuditEntry, auditInsertSql, auditValues } from "../../auth/audit";
import type { Scope } from "../../auth/scope";
import { auditsWithinRead, byEngine, type EffectsSource, effectsStore, type MysqlReader } from "../../console/effects-store";
import { mysqlBool, mysqlIso, mysqlJson } from "../../console/mysql-sql";
import { redactMessage, redactOutcome } from "../../console/redact";
import type { StatementQueryable } from "../../db/types";
import { providerKeyFor } from "../../idempotency";
import { isStuck } from "../../idempotency/states";
import { toListedViolation, type ViolationRow } from "../violations/list-violations";
import type { EffectDetail, JobStep, ProviderSide, TimelineDelivery } from "./contract";
import { effectVerdict } from "./effect-verdict";
import { type DeliveryAnswer, type EffectStatus, TIMELINE_LIMIT } from "./effects-types";
import { getProviderSide } from "./provider-side";
import { chunkDeliveryColumns } from "./timeline-chunk-sql";

interface EffectRow {
  key: string;
  job_type: string;
  status: EffectStatus;
  policy: string;
  attempt: number;
  owner: string | null;
  lease_until: Date | null;
  first_message_id: string | null;
  last_message_id: string | null;
  outcome: unknown;
  error: string | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  duplicate_count: number;
  last_duplicate_at: Date | null;
  max_gap_seconds: number | null;
}

const EFFECT_COLUMNS = `key, job_type, status, policy, attempt, owner, lease_until, first_message_id, last_message_id, outcome, error,
         created_at, updated_at, completed_at, duplicate_count, last_duplicate_at, max_gap_seconds`;

// GET /api/v1/effects/{key} in two round trips, each a named statement (parsed once per
// connection; PostgreSQL keeps one generic plan for it, pruned to the partitions its parameters
// allow when it starts). One statement could not be pruned so: the job's steps and deliveries are
// read around the effect's creation, which a single statement knows only while it runs, so it
// opened every day's partition of effects and of delivery_timeline for each of those reads (~40
// each), ~1.5 ms of a 2.4 ms lookup at 10M rows. The second statement is given the effect's
// creation and opens only the days around it (docs/benchmarks.md, 2026-12-06). Between the two, a
// job type a provider holds takes a third, what the last reconciliation saw (provider-side.ts). The
// audited lookup's row is written by the second, as a CTE (readEffectPostgres).
//  - EFFECT_ROW: one effect of one tenant. (tenant_id, key) is unique across partitions
//    (onceboard_claim's advisory lock), and each partition's unique index answers it; the upper
//    bound on created_at prunes the premade future partitions. Another tenant's key and a missing
//    key take the same path and return the same nothing. An Append probes its partitions oldest
//    first and stops at the first row, so a key of today was found only after a probe of every day
//    of the retention; the last two days go first (their own branch), and the older days are read
//    only when those hold no such key. Most keys asked about in an incident are that recent.
//    created_at also comes back as text: the second statement must be given it to the
//    microsecond, which a JavaScript Date does not hold.
//  - EFFECT_CONTEXT, with the effect's creation ($4) and its first and last message ($5, $6):
//  - found/steps: the job's other steps, effects of the same tenant first claimed by this effect's
//    first or last message, within 3 days of it (the default maxRetryWindow), and not after now.
//    Each closed partition's Keys index, <partition>_tenant_created_at_idx (built by maintenance
//    once the partition has closed, so no claim writes an entry), holds (tenant_id, created_at,
//    key) and includes first_message_id, so the tenant's entries of those days are read from the
//    index alone (about 2,300 at 10M rows and 1,000 tenants). The open partition has no such index:
//    there the tenant's rows of that one day are found through the (tenant_id, key) unique index
//    (a bitmap scan, ~330 rows at 10M a month). Only the steps found are read from the table, each
//    by its exact (tenant, key, created_at), which prunes to its one partition. A step whose *last*
//    message is one of these but whose first is not is not listed: matching it would need
//    last_message_id in the index, and the duplicate bookkeeping that updates that column would
//    then never be a HOT update.
//  - timeline/timeline_total: this effect's deliveries (delivery_timeline, chunks of parallel arrays
//    written by the workers in the background; a column holding one element holds the value every
//    delivery of its chunk shares, and an empty effect_created_at is each delivery's delivered_at:
//    migration 0015), the newest TIMELINE_LIMIT: the chunks that name the
//    key in later_keys, and the first-delivery chunk that holds the effect's creation instant.
//    From the effect's creation on, and only those that met this effect (or none): a key reused after an earlier effect was pruned does not show that one's deliveries.
//  - violations: this key's own uncaught violations (uncaught_violation_keys, one row per
//    occurrence, written by the worker when it happened), newest first: never another key's.
// The two statements see the database a moment apart. The deliveries are written in the
// background anyway, so they may trail the effect by more than that; the effect's own entry among
// the steps is taken from the effect's row (getEffect), so the two never disagree on one page.
const EFFECT_ROW = {
  name: "console_get_effect",
  text: `
SELECT *, created_at::text AS created_at_exact FROM (
  (SELECT ${EFFECT_COLUMNS} FROM effects
    WHERE tenant_id = $1 AND key = $2
      AND created_at > $3::timestamptz - interval '2 days' AND created_at <= $3::timestamptz + interval '1 minute'
    LIMIT 1)
  UNION ALL
  (SELECT ${EFFECT_COLUMNS} FROM effects
    WHERE tenant_id = $1 AND key = $2 AND created_at <= $3::timestamptz - interval '2 days'
    LIMIT 1)
) recent_first
LIMIT 1`,
};

/** Around the effect: $4 its creation, $5 and $6 its first and last message ids, $7 the timeline's limit. */
const AROUND_EFFECT = `created_at BETWEEN $4::timestamptz - interval '3 days' AND $4::timestamptz + interval '3 days'
     AND created_at <= $3::timestamptz + interval '1 minute'`;
function effectContext(audited: boolean) {
  return {
    name: audited ? "console_get_effect_context_audited" : "console_get_effect_context",
    text: `
WITH found AS MATERIALIZED (
  SELECT key, created_at
    FROM effects
   WHERE tenant_id = $1
     AND ${AROUND_EFFECT}
     AND first_message_id IN ($5::text, $6::text)
   ORDER BY created_at, key
   LIMIT 50
), steps AS MATERIALIZED (
  SELECT st.*
    FROM found f
   CROSS JOIN LATERAL (
          SELECT key, job_type, status, policy, attempt, created_at, completed_at, duplicate_count
            FROM effects
           WHERE tenant_id = $1 AND key = f.key AND created_at = f.created_at
             AND ${AROUND_EFFECT}
           LIMIT 1) st
), chunks AS (
  -- Later deliveries through later_keys (GIN); the first delivery by its instant, the effect's
  -- creation (lib/idempotency/timeline.ts keeps first deliveries in chunks of one UTC minute).
  SELECT c.*
    FROM delivery_timeline c
   WHERE c.later_keys @> ARRAY[$1 || chr(31) || $2]
     AND c.first_at >= date_trunc('hour', $4::timestamptz) AND c.first_at <= $3::timestamptz + interval '1 minute'
  UNION ALL
  SELECT c.*
    FROM delivery_timeline c
   WHERE c.later_keys IS NULL
     AND c.first_at >= date_trunc('minute', $4::timestamptz) AND c.first_at <= $4::timestamptz AND c.last_at >= $4::timestamptz
), deliveries AS MATERIALIZED (
  SELECT u.delivered_at, c.chunk_id, u.n, u.answer, u.message_id, u.delivery_attempt, u.effect_attempt, c.worker_id,
         u.claim_ms, u.answer = 'claimed' AND u.delivered_at = $4::timestamptz AS first
    FROM chunks c
   CROSS JOIN LATERAL unnest(c.keys) WITH ORDINALITY AS k(key, n)
   CROSS JOIN LATERAL (
          SELECT k.n, d.tenant_id, d.delivered_at, d.answer, d.message_id, d.delivery_attempt, d.effect_attempt, d.claim_ms,
                 CASE cardinality(c.effect_created_at) WHEN 0 THEN d.delivered_at
                      WHEN 1 THEN c.effect_created_at[1] ELSE c.effect_created_at[k.n] END AS effect_created_at
            FROM (SELECT ${chunkDeliveryColumns(["tenant_id", "delivered_at", "answer", "message_id", "delivery_attempt", "effect_attempt", "claim_ms"])}) d
         ) u
   WHERE k.key = $2 AND u.tenant_id = $1
     AND u.delivered_at >= $4::timestamptz AND u.delivered_at <= $3::timestamptz + interval '1 minute'
     AND (u.effect_created_at IS NULL OR u.effect_created_at = $4::timestamptz)
), timeline AS (
  SELECT * FROM deliveries ORDER BY delivered_at DESC, chunk_id DESC, n DESC LIMIT $7
), violations AS (
  SELECT v.id::text AS id, v.occurred_at, v.tenant_id, v.job_type, v.constraint_name, v.key, v.message_id, v.message
    FROM uncaught_violation_keys v
   WHERE v.tenant_id = $1 AND v.key = $2
   ORDER BY v.occurred_at DESC, v.id DESC
   LIMIT 20
)${audited ? `, audited AS (${auditInsertSql(8)})` : ""}
SELECT (SELECT coalesce(json_agg(s ORDER BY s.created_at, s.key), '[]') FROM steps s) AS steps,
       (SELECT coalesce(json_agg(v ORDER BY v.occurred_at DESC, v.id DESC), '[]') FROM violations v) AS violations,
       (SELECT coalesce(json_agg(t ORDER BY t.delivered_at, t.chunk_id, t.n), '[]') FROM timeline t) AS timeline,
       (SELECT count(*)::int FROM deliveries) AS timeline_total`,
  };
}
const EFFECT_CONTEXT = effectContext(false);
const EFFECT_CONTEXT_AUDITED = effectContext(true);

// The same reads on MySQL (the library's MySQL schema: effects unpartitioned, its primary key
// (tenant_id, key); a row per delivery in delivery_timeline, found by delivery_timeline_key_idx
// (tenant_id, key, delivered_at)). The effect first, then its steps, deliveries and violations at
// once, each a plain statement: MySQL 8 has no ORDER BY inside JSON_ARRAYAGG, so the rows come as
// rows. Instants are bound as Dates (the pool's session is UTC).
const EFFECT_MYSQL = `
SELECT \`key\`, job_type, status, policy, attempt, owner, lease_until, first_message_id, last_message_id, outcome, error,
       created_at, updated_at, completed_at, duplicate_count, last_duplicate_at, max_gap_seconds
  FROM effects
 WHERE tenant_id = ? AND \`key\` = ? AND created_at <= ? + INTERVAL 1 MINUTE`;

// Served by effects_tenant_created_at_idx (tenant_id, created_at): the tenant's effects of the 6
// days around this one, their first message id tested on each.
const STEPS_MYSQL = `
SELECT \`key\`, job_type, status, policy, attempt, created_at, completed_at, duplicate_count
  FROM effects
 WHERE tenant_id = ?
   AND created_at BETWEEN ? - INTERVAL 3 DAY AND ? + INTERVAL 3 DAY
   AND first_message_id IN (?, ?)
 ORDER BY created_at, \`key\`
 LIMIT 50`;

// This effect's deliveries from its creation on, and only those that met it (or none), as on
// PostgreSQL; the newest ? of them, and how many there are. "first": the claim that made it.
const DELIVERIES_MYSQL = `
  FROM delivery_timeline
 WHERE tenant_id = ? AND \`key\` = ? AND delivered_at >= ? AND delivered_at <= ? + INTERVAL 1 MINUTE
   AND (effect_created_at IS NULL OR effect_created_at = ?)`;
const TIMELINE_MYSQL = `
SELECT delivered_at, answer, message_id, delivery_attempt, effect_attempt, worker_id, claim_ms,
       answer = 'claimed' AND delivered_at = ? AS first
${DELIVERIES_MYSQL}
 ORDER BY delivered_at DESC, chunk_id DESC, seq DESC
 LIMIT ?`;
const TIMELINE_TOTAL_MYSQL = `SELECT count(*) AS n ${DELIVERIES_MYSQL}`;

const VIOLATIONS_MYSQL = `
SELECT id, ${mysqlIso("occurred_at")} AS occurred_at, tenant_id, job_type, constraint_name, \`key\`, message_id, message
  FROM uncaught_violation_keys
 WHERE tenant_id = ? AND \`key\` = ?
 ORDER BY occurred_at DESC, id DESC
 LIMIT 20`;

/** A step or a delivery: timestamps are ISO 8601 strings as json_agg writes them (PostgreSQL), or Dates (MySQL). */
interface StepJson {
  key: string;
  job_type: string;
  status: EffectStatus;
  policy: string;
  attempt: number;
  created_at: string | Date;
  completed_at: string | Date | null;
  duplicate_count: number;
}
interface DeliveryJson {
  delivered_at: string | Date;
  answer: DeliveryAnswer;
  message_id: string | null;
  delivery_attempt: number | null;
  effect_attempt: number;
  worker_id: string;
  claim_ms: number;
  first: boolean | null;
}

/** What either engine answers for one key: the effect, its steps, violations and deliveries (oldest first). */
type EffectDetailRow = EffectRow & {
  provider_side: ProviderSide | null;
  steps: StepJson[];
  violations: ViolationRow[];
  timeline: DeliveryJson[];
  timeline_total: number;
};

/**
 * The effect, then what the last reconciliation saw of it (a round trip only for a job type a
 * provider holds), then its context: in that order so that `audit`, when given, is written by the
 * last statement, as a CTE of the context's read: the row commits if and only if the read it
 * records succeeded, and costs no round trip of its own.
 */
async function readEffectPostgres(
  db: StatementQueryable,
  tenant: string,
  key: string,
  now: Date,
  audit: AuditEntry | undefined,
): Promise<EffectDetailRow | null> {
  const { rows } = await db.query<EffectRow & { created_at_exact: string }>({ ...EFFECT_ROW, values: [tenant, key, now] });
  const found = rows[0];
  if (!found) return null;
  const { created_at_exact, ...effect } = found;
  const providerSide = await getProviderSide(
    db,
    {
      tenant,
      key: effect.key,
      jobType: effect.job_type,
      status: effect.status,
      attempts: effect.attempt,
      createdAt: effect.created_at,
      outcome: effect.outcome,
    },
    { now },
  );
  const values = [tenant, key, now, created_at_exact, effect.first_message_id, effect.last_message_id, TIMELINE_LIMIT];
  const { rows: context } = await db.query<Omit<EffectDetailRow, keyof EffectRow | "provider_side">>(
    audit ? { ...EFFECT_CONTEXT_AUDITED, values: [...values, ...auditValues(audit)] } : { ...EFFECT_CONTEXT, values },
  );
  return { ...effect, provider_side: providerSide, ...(context[0] as Omit<EffectDetailRow, keyof EffectRow | "provider_side">) };
}

async function readEffectMysql(db: MysqlReader, tenant: string, key: string, now: Date): Promise<EffectDetailRow | null> {
  const [effect] = await db.query<EffectRow>(EFFECT_MYSQL, [tenant, key, now]);
  if (!effect) return null;
  const created = effect.created_at;
  const deliveries = [tenant, key, created, now, created];
  const [steps, timeline, total, violations] = await Promise.all([
    db.query<StepJson>(STEPS_MYSQL, [tenant, created, created, effect.first_message_id, effect.last_message_id]),
    db.query<DeliveryJson>(TIMELINE_MYSQL, [created, ...deliveries, TIMELINE_LIMIT]),
    db.query<{ n: number }>(TIMELINE_TOTAL_MYSQL, deliveries),
    db.query<ViolationRow>(VIOLATIONS_MYSQL, [tenant, key]),
  ]);
  return {
    ...effect,
    outcome: effect.outcome === null ? null : mysqlJson(effect.outcome),
    steps,
    violations,
    timeline: timeline.reverse().map((t) => ({ ...t, first: mysqlBool(t.first) })),
    timeline_total: Number(total[0]?.n ?? 0),
    // Reconciliation reads the effects beside its findings in one PostgreSQL: it does not run on a
    // MySQL store, so there is no provider side to show there.
    provider_side: null,
  };
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

interface EffectQuestion {
  tenant?: string | null;
  key: string;
  now?: Date;
}

/** GET /api/v1/effects/{key}: the effect, its job's steps and its own uncaught violations; null when the tenant (the scope's, or the one a platform scope names) has no such key. */
export async function getEffect(
  scope: Scope,
  input: EffectQuestion,
  db: EffectsSource = effectsStore(),
): Promise<EffectDetail | null> {
  return (await readEffect(scope, input, db)).detail;
}

/**
 * getEffect, given the audit row of a read that finds the effect: on PostgreSQL that row is
 * written by the read's last statement (readEffectPostgres), and `audited` says so. A missing key,
 * a MySQL store (whose console tables, audit_log among them, are in PostgreSQL) or effects
 * distributed by Citus (auditsWithinRead) write nothing: the caller writes its row after the read.
 */
export async function readEffect(
  scope: Scope,
  input: EffectQuestion,
  db: EffectsSource = effectsStore(),
  auditIfFound?: AuditEntry,
): Promise<{ detail: EffectDetail | null; audited: boolean }> {
  const tenant = scope.narrow(input.tenant).oneTenant();
  const now = input.now ?? new Date();
  const audit = auditIfFound && (await auditsWithinRead(db)) ? auditIfFound : undefined;
  const row = await byEngine(db, {
    postgres: (pg) => readEffectPostgres(pg, tenant, input.key, now, audit),
    mysql: (my) => readEffectMysql(my, tenant, input.key, now),
  });
  if (!row) return { detail: null, audited: false };
  return {
    detail: toEffectDetail(row, tenant, now),
    audited: audit !== undefined,
  };
}

function toEffectDetail(row: EffectDetailRow, tenant: string, now: Date): EffectDetail {
  const isoOf = (text: string | Date) => new Date(text).toISOString();
  // The effect's own step is its row's, as the page's header shows it: the steps were read by a
  // later statement, which may already see a newer status or count for it.
  const own: JobStep = {
    key: row.key,
    jobType: row.job_type,
    status: row.status,
    policy: row.policy,
    attempt: row.attempt,
    createdAt: row.created_at.toISOString(),
    completedAt: iso(row.completed_at),
    duplicateCount: row.duplicate_count,
  };
  const steps: JobStep[] = row.steps.map((s) =>
    s.key === row.key
      ? own
      : {
          key: s.key,
          jobType: s.job_type,
          status: s.status,
          policy: s.policy,
          attempt: s.attempt,
          createdAt: isoOf(s.created_at),
          completedAt: s.completed_at === null ? null : isoOf(s.completed_at),
          duplicateCount: s.duplicate_count,
        },
  );
  if (!steps.includes(own)) steps.push(own);

  const violations = row.violations.map(toListedViolation);
  const timeline = toTimeline(row.timeline);

  const stuck = isStuck({ status: row.status, leaseUntil: row.lease_until }, now);
  const gap =
    row.max_gap_seconds ?? (row.last_duplicate_at ? (row.last_duplicate_at.getTime() - row.created_at.getTime()) / 1000 : null);
  const inFlight = row.status === "in_progress";
  return {
    tenant,
    key: row.key,
    jobType: row.job_type,
    status: row.status,
    policy: row.policy,
    attempts: row.attempt,
    outcome: redactOutcome(row.outcome),
    error: row.error === null ? null : redactMessage(row.error),
    providerKey: providerKeyFor(tenant, row.key),
    firstMessageId: row.first_message_id,
    lastMessageId: row.last_message_id,
    createdAt: row.created_at.toISOString(),
    completedAt: iso(row.completed_at),
    updatedAt: row.updated_at.toISOString(),
    duplicateCount: row.duplicate_count,
    lastDuplicateAt: iso(row.last_duplicate_at),
    lastDuplicateGapSeconds: gap,
    owner: inFlight ? row.owner : null,
    leaseUntil: inFlight ? iso(row.lease_until) : null,
    stuck,
    verdict: effectVerdict({
      status: row.status,
      policy: row.policy,
      attempts: row.attempt,
      duplicateCount: row.duplicate_count,
      lastDuplicateGapSeconds: gap,
      stuck,
    }),
    providerSide: row.provider_side,
    steps,
    violations,
    timeline,
    timelineTotal: row.timeline_total,
  };
}

/** The deliveries oldest first, each with the gap since the one before it. */
function toTimeline(rows: DeliveryJson[]): TimelineDelivery[] {
  let previous: number | null = null;
  return rows.map((t) => {
    const at = new Date(t.delivered_at).getTime();
    const gapSeconds = previous === null ? null : (at - previous) / 1000;
    previous = at;
    return {
      deliveredAt: new Date(at).toISOString(),
      answer: t.answer,
      messageId: t.message_id,
      deliveryAttempt: t.delivery_attempt,
      effectAttempt: t.effect_attempt,
      worker: t.worker_id,
      claimMs: t.claim_ms,
      gapSeconds,
      first: t.first === true,
    };
  });
}
