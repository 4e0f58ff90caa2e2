import type { Queryable } from "../db/types";
import { providerKeyFor } from "../idempotency";
import { consoleDatabase } from "./database";
import { effectVerdict } from "./effect-verdict";
import type { EffectDetail, EffectStatus, JobStep, LinkedViolation } from "./effects-types";
import { redactOutcome } from "./redact";

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

// One effect of one tenant. (tenant_id, key) is unique across partitions (onceboard_claim's
// advisory lock), and each partition's unique index answers it; the upper bound on created_at
// prunes the premade future partitions. Another tenant's key and a missing key take the same path
// and return the same nothing.
const EFFECT_SQL = `
SELECT key, job_type, status, policy, attempt, owner, lease_until, first_message_id, last_message_id, outcome, error,
       created_at, updated_at, completed_at, duplicate_count, last_duplicate_at, max_gap_seconds
  FROM effects
 WHERE tenant_id = $1 AND key = $2 AND created_at <= $3::timestamptz + interval '1 minute'
 LIMIT 1`;

// The job's other steps: effects of the same tenant that share a message id with this one. A
// bounded scan (the tenant's rows within 3 days of this effect, through the per-partition
// (tenant_id, key) index) instead of an index on first_message_id that every claim would pay for.
const STEPS_SQL = `
SELECT key, job_type, status, policy, attempt, created_at, completed_at, duplicate_count
  FROM effects
 WHERE tenant_id = $1
   AND created_at BETWEEN $2::timestamptz - interval '3 days' AND $2::timestamptz + interval '3 days'
   AND (first_message_id = ANY($3::text[]) OR last_message_id = ANY($3::text[]))
 ORDER BY created_at, key
 LIMIT 50`;

// Uncaught violations of the job's types around its lifetime whose last occurrence was in this
// tenant (the rollup spans tenants; a row not attributed to this tenant is never shown to it).
const VIOLATIONS_SQL = `
SELECT minute, job_type, constraint_name, count, last_key, last_message_id
  FROM uncaught_violations_minute
 WHERE job_type = ANY($1::text[])
   AND minute BETWEEN $2::timestamptz - interval '1 minute' AND $3::timestamptz + interval '1 minute'
   AND last_tenant_id = $4
 ORDER BY minute DESC
 LIMIT 20`;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** GET /api/v1/effects/{key}: the effect, its job's steps and linked violations; null when the tenant has no such key. */
export async function getEffect(
  input: { tenant: string; key: string; now?: Date },
  db: Queryable = consoleDatabase(),
): Promise<EffectDetail | null> {
  const now = input.now ?? new Date();
  const { rows } = await db.query<EffectRow>(EFFECT_SQL, [input.tenant, input.key, now]);
  const row = rows[0];
  if (!row) return null;

  const messageIds = [row.first_message_id, row.last_message_id].filter((m): m is string => m !== null);
  const steps: JobStep[] =
    messageIds.length === 0
      ? []
      : (
          await db.query<{
            key: string;
            job_type: string;
            status: EffectStatus;
            policy: string;
            attempt: number;
            created_at: Date;
            completed_at: Date | null;
            duplicate_count: number;
          }>(STEPS_SQL, [input.tenant, row.created_at, messageIds])
        ).rows.map((s) => ({
          key: s.key,
          jobType: s.job_type,
          status: s.status,
          policy: s.policy,
          attempt: s.attempt,
          createdAt: s.created_at.toISOString(),
          completedAt: iso(s.completed_at),
          duplicateCount: s.duplicate_count,
        }));
  if (!steps.some((s) => s.key === row.key)) {
    steps.push({
      key: row.key,
      jobType: row.job_type,
      status: row.status,
      policy: row.policy,
      attempt: row.attempt,
      createdAt: row.created_at.toISOString(),
      completedAt: iso(row.completed_at),
      duplicateCount: row.duplicate_count,
    });
  }

  const jobTypes = [...new Set(steps.map((s) => s.jobType))];
  const lastTouched = new Date(Math.max(row.updated_at.getTime(), ...steps.map((s) => Date.parse(s.completedAt ?? s.createdAt))));
  const stepKeys = new Set(steps.map((s) => s.key));
  const violations: LinkedViolation[] = (
    await db.query<{
      minute: Date;
      job_type: string;
      constraint_name: string;
      count: number;
      last_key: string | null;
      last_message_id: string | null;
    }>(VIOLATIONS_SQL, [jobTypes, row.created_at, lastTouched, input.tenant])
  ).rows.map((v) => ({
    minute: v.minute.toISOString(),
    jobType: v.job_type,
    constraint: v.constraint_name,
    count: Number(v.count),
    lastKey: v.last_key,
    lastMessageId: v.last_message_id,
    thisJob:
      (v.last_key !== null && stepKeys.has(v.last_key)) || (v.last_message_id !== null && messageIds.includes(v.last_message_id)),
  }));

  const stuck = row.status === "in_progress" && row.lease_until !== null && row.lease_until.getTime() <= now.getTime();
  const gap =
    row.max_gap_seconds ?? (row.last_duplicate_at ? (row.last_duplicate_at.getTime() - row.created_at.getTime()) / 1000 : null);
  const inFlight = row.status === "in_progress";
  return {
    tenant: input.tenant,
    key: row.key,
    jobType: row.job_type,
    status: row.status,
    policy: row.policy,
    attempts: row.attempt,
    outcome: redactOutcome(row.outcome),
    error: row.error === null ? null : String(redactOutcome(row.error)),
    providerKey: providerKeyFor(input.tenant, row.key),
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
    steps,
    violations,
  };
}
