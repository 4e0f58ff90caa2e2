import { byTenant } from "./citus";
import type { Sql, Statement } from "./db";
import type { EffectStatus } from "./states";

/** How the effects table names a step's policy (effects.policy). */
export type DbPolicy = "once" | "external" | "at_most_once" | "transactional";

export type ClaimResultKind =
  | "claimed" // first delivery: we own the effect
  | "takeover" // the previous owner's lease expired: we own it, attempt + 1
  | "retry" // the previous attempt failed (its step threw): we own it, attempt + 1
  | "duplicate" // completed or abandoned before: the stored outcome is returned, duplicate counted
  | "abandoned" // at-most-once whose owner died: we marked it abandoned; do not run
  | "in_flight" // another delivery owns it and its lease is alive
  | "key_reuse" // same key, different payload hash
  | "retention_expired"; // not found, and the delivery is older than the retention

export interface ClaimRow {
  result: ClaimResultKind;
  status: EffectStatus | null;
  attempt: number;
  owner: string | null;
  policy: DbPolicy | null;
  createdAt: Date | null;
  leaseUntil: Date | null;
  outcome: unknown;
  error: string | null;
  gapSeconds: number | null;
  duplicateCount: number;
  firstMessageId: string | null;
  dbNow: Date;
}

export interface ClaimParams {
  tenant: string;
  key: string;
  jobType: string;
  policy: DbPolicy;
  owner: string;
  messageId: string | null;
  requestHash: string | null;
  leaseMs: number;
  lockTimeoutMs: number;
  requireExisting: boolean;
  /** Written on a new effect row (options.marked). */
  marked: boolean;
  /** A redelivery: look for the completed effect read-only first (CLAIM_REDELIVERY). */
  likelyDuplicate?: boolean;
  /**
   * Write a new effect already completed, its outcome empty (onceboard_claim's p_completed): only
   * inside a transaction that is rolled back whenever the step does not succeed. The answer says so
   * (status "completed" on a "claimed" row); a store may ignore this and answer "in_progress".
   */
  completed?: boolean;
}

// One round trip: the whole decision (lock, look across partitions, insert / take over / answer
// the duplicate) happens inside onceboard_claim, whose one source is sql/onceboard_claim.sql
// (stamped into migrations by `npm run db:stamp`). Casts are explicit so the statement plans the
// same through pg and through Prisma's raw queries.
export const CLAIM: Statement = {
  name: "onceboard_claim_v3",
  returns: "rows",
  text: `SELECT result, status, attempt, owner, policy, created_at, lease_until, outcome, error, gap_seconds,
       duplicate_count, first_message_id, db_now
  FROM onceboard.onceboard_claim($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text,
                       $8::int, $9::int, $10::boolean, $11::boolean, $12::boolean)`,
};

// A redelivery is usually a duplicate of a completed effect. A completed or abandoned row never
// changes again (only the batched duplicate bookkeeping touches it, never its status, outcome or
// request hash), so finding one needs no advisory lock and no plpgsql: this statement answers it
// with one index probe per live partition, read-only, in the same single round trip. Only when no
// such row exists does it run onceboard_claim, which decides everything else under its lock (the
// InitPlan gate means the function is not called at all when the row was found). Not used for
// first deliveries: there it would be one more probe before the function's own look.
// created_at is bounded by now() + 1 day, as in onceboard_claim, so future partitions are pruned.
const CLAIM_REDELIVERY: Statement = {
  name: "onceboard_claim_redelivery_v2",
  returns: "rows",
  text: `WITH done AS MATERIALIZED (
  SELECT f.status, f.attempt, f.owner, f.policy, f.created_at, f.lease_until, f.outcome, f.error, f.request_hash,
         f.duplicate_count, f.first_message_id
    FROM onceboard.effects f
   WHERE f.tenant_id = $1::text AND f.key = $2::text AND f.created_at <= now() + interval '1 day'
     AND f.status IN ('completed', 'abandoned')
)
SELECT CASE WHEN $7::text IS NOT NULL AND d.request_hash IS NOT NULL AND d.request_hash <> $7::text
            THEN 'key_reuse' ELSE 'duplicate' END AS result,
       d.status, d.attempt, d.owner, d.policy, d.created_at, d.lease_until, d.outcome, d.error,
       extract(epoch FROM date_trunc('milliseconds', clock_timestamp()) - d.created_at)::double precision AS gap_seconds,
       d.duplicate_count, d.first_message_id, date_trunc('milliseconds', clock_timestamp()) AS db_now
  FROM done d
UNION ALL
SELECT c.result, c.status, c.attempt, c.owner, c.policy, c.created_at, c.lease_until, c.outcome, c.error, c.gap_seconds,
       c.duplicate_count, c.first_message_id, c.db_now
  FROM onceboard.onceboard_claim($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text,
                       $8::int, $9::int, $10::boolean, $11::boolean, $12::boolean) c
 WHERE NOT EXISTS (SELECT 1 FROM done)`,
};

interface RawClaimRow {
  result: ClaimResultKind;
  status: EffectStatus | null;
  attempt: number | null;
  owner: string | null;
  policy: DbPolicy | null;
  created_at: Date | string | null;
  lease_until: Date | string | null;
  outcome: unknown;
  error: string | null;
  gap_seconds: number | string | null;
  duplicate_count: number | null;
  first_message_id: string | null;
  db_now: Date | string;
}

function toDate(value: Date | string | null | undefined): Date | null {
  if (value === null || value === undefined) return null;
  return value instanceof Date ? value : new Date(value);
}

/**
 * One claim. On Citus (`citus`) a redelivery goes through CLAIM too: CLAIM_REDELIVERY's statement
 * reads a shard and calls a distributed function in one query, which Citus refuses ("cannot execute
 * a distributed query from a query on a shard"); CLAIM is delegated whole to the tenant's worker,
 * where onceboard_claim answers a completed effect as CLAIM_REDELIVERY would.
 */
export async function runClaim(sql: Sql, p: ClaimParams, citus = false): Promise<ClaimRow> {
  const { rows } = await sql.run<RawClaimRow>(p.likelyDuplicate && !citus ? CLAIM_REDELIVERY : CLAIM, [
    p.tenant,
    p.key,
    p.jobType,
    p.policy,
    p.owner,
    p.messageId,
    p.requestHash,
    Math.max(1, Math.round(p.leaseMs)),
    Math.max(1, Math.round(p.lockTimeoutMs)),
    p.requireExisting,
    p.marked,
    p.completed === true,
  ]);
  const raw = rows[0];
  if (!raw) throw new Error("onceboard_claim returned no row");
  return toClaimRow(raw);
}

function toClaimRow(raw: RawClaimRow): ClaimRow {
  return {
    result: raw.result,
    status: raw.status,
    attempt: Number(raw.attempt ?? 0),
    owner: raw.owner,
    policy: raw.policy,
    createdAt: toDate(raw.created_at),
    leaseUntil: toDate(raw.lease_until),
    outcome: raw.outcome,
    error: raw.error,
    gapSeconds: raw.gap_seconds === null ? null : Number(raw.gap_seconds),
    duplicateCount: Number(raw.duplicate_count ?? 0),
    firstMessageId: raw.first_message_id,
    dbNow: toDate(raw.db_now) ?? new Date(),
  };
}

// Many claims, one round trip, one commit (sql/onceboard_claim_batch.sql): each key gets the
// answer onceboard_claim would give it alone. Arrays are positional; `ord` (1-based) maps each
// answer back to its key, as the function claims in advisory-lock order, not in input order.
const CLAIM_BATCH: Statement = {
  name: "onceboard_claim_batch_v1",
  returns: "rows",
  text: `SELECT b.ord, (b.claim).*
  FROM onceboard.onceboard_claim_batch($1::text[], $2::text[], $3::text, $4::text, $5::text[], $6::text[], $7::text[],
                             $8::int, $9::int, $10::boolean[], $11::boolean) b`,
};

export interface BatchClaimParams {
  jobType: string;
  policy: DbPolicy;
  leaseMs: number;
  lockTimeoutMs: number;
  marked: boolean;
  claims: {
    tenant: string;
    key: string;
    owner: string;
    messageId: string | null;
    requestHash: string | null;
    requireExisting: boolean;
  }[];
}

/**
 * One batch statement for claims that share job type, policy, lease and marking (the first's).
 * Its lock timeout is the shortest wait of the batch: a key that would wait longer than it was
 * willing to gets the whole batch claimed again one by one, each with its own wait.
 */
export function batchOf(claims: readonly ClaimParams[]): BatchClaimParams {
  const first = claims[0];
  if (!first) throw new Error("a claim batch needs at least one claim");
  return {
    jobType: first.jobType,
    policy: first.policy,
    leaseMs: first.leaseMs,
    lockTimeoutMs: Math.max(1, Math.min(...claims.map((c) => c.lockTimeoutMs))),
    marked: first.marked,
    claims: claims.map((c) => ({
      tenant: c.tenant,
      key: c.key,
      owner: c.owner,
      messageId: c.messageId,
      requestHash: c.requestHash,
      requireExisting: c.requireExisting,
    })),
  };
}

// One tenant's share of a batch, for Citus (sql/onceboard_claim_tenant.sql): delegated whole to the
// worker holding the tenant's shard (a call whose FROM is the one distributed function).
const CLAIM_TENANT: Statement = {
  name: "onceboard_claim_tenant_v1",
  returns: "rows",
  text: `SELECT b.ord, (b.claim).*
  FROM onceboard.onceboard_claim_tenant($1::text, $2::text[], $3::text, $4::text, $5::text[], $6::text[], $7::text[],
                              $8::int, $9::int, $10::boolean[], $11::boolean) b`,
};

/**
 * The claim rows in input order. On Citus (`citus`) the batch goes as one call per tenant, at once
 * (each on its own connection when `sql` is a pool): onceboard_claim_batch mixes tenants, which no
 * worker holds together. A group's failure (a lock wait past its timeout) fails the whole batch, as
 * onceboard_claim_batch's does, and the caller claims its keys one by one.
 */
export async function runClaimBatch(sql: Sql, p: BatchClaimParams, citus = false): Promise<ClaimRow[]> {
  if (citus) {
    const out: ClaimRow[] = new Array(p.claims.length);
    const groups = [...byTenant(p.claims, (c) => c.tenant)];
    const answers = await Promise.all(groups.map(([tenant, indexes]) => runClaimTenant(sql, p, tenant, indexes)));
    for (const [g, [, indexes]] of groups.entries()) {
      const rows = answers[g] as ClaimRow[];
      for (const [k, index] of indexes.entries()) out[index] = rows[k] as ClaimRow;
    }
    return out;
  }
  const { rows } = await sql.run<RawClaimRow & { ord: number }>(CLAIM_BATCH, [
    p.claims.map((c) => c.tenant),
    p.claims.map((c) => c.key),
    p.jobType,
    p.policy,
    p.claims.map((c) => c.owner),
    p.claims.map((c) => c.messageId),
    p.claims.map((c) => c.requestHash),
    Math.max(1, Math.round(p.leaseMs)),
    Math.max(1, Math.round(p.lockTimeoutMs)),
    p.claims.map((c) => c.requireExisting),
    p.marked,
  ]);
  const out: ClaimRow[] = new Array(p.claims.length);
  for (const raw of rows) out[raw.ord - 1] = toClaimRow(raw);
  if (rows.length !== p.claims.length)
    throw new Error(`onceboard_claim_batch returned ${rows.length} rows for ${p.claims.length} claims`);
  return out;
}

async function runClaimTenant(sql: Sql, p: BatchClaimParams, tenant: string, indexes: readonly number[]): Promise<ClaimRow[]> {
  const claims = indexes.map((i) => p.claims[i] as BatchClaimParams["claims"][number]);
  const { rows } = await sql.run<RawClaimRow & { ord: number }>(CLAIM_TENANT, [
    tenant,
    claims.map((c) => c.key),
    p.jobType,
    p.policy,
    claims.map((c) => c.owner),
    claims.map((c) => c.messageId),
    claims.map((c) => c.requestHash),
    Math.max(1, Math.round(p.leaseMs)),
    Math.max(1, Math.round(p.lockTimeoutMs)),
    claims.map((c) => c.requireExisting),
    p.marked,
  ]);
  if (rows.length !== claims.length)
    throw new Error(`onceboard_claim_tenant returned ${rows.length} rows for ${claims.length} claims`);
  const out: ClaimRow[] = new Array(claims.length);
  for (const raw of rows) out[raw.ord - 1] = toClaimRow(raw);
  return out;
}
