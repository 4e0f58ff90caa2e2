import type { Scope } from "../../auth/scope";
import { loadConfig } from "../../config";
import { byEngine, type EffectsSource, effectsStore, type MysqlReader } from "../../console/effects-store";
import { readStuckClaims } from "../../idempotency/admin";
import { stuckSql } from "../../idempotency/states";
import type { StuckClaim } from "./contract";

interface GetStuckClaimsInput {
  jobType?: string | null;
  limit?: number;
  now?: Date;
}

interface StuckClaims {
  claims: StuckClaim[];
  total: number;
  byTenant: Map<string, number>;
}

type StuckClaimRow = Awaited<ReturnType<typeof readStuckClaims>>["claims"][number];

// The library's stuck rule (stuckSql) on MySQL, over effects_status_lease_until_idx (status,
// lease_until): the list, oldest lease first, and the counts per tenant. Params: now, job type
// (twice), tenant (twice), then the limit for the list.
const STUCK_WHERE_MYSQL = `WHERE ${stuckSql("?")} AND (? IS NULL OR job_type = ?) AND (? IS NULL OR tenant_id = ?)`;
const STUCK_LIST_MYSQL = `
SELECT tenant_id, \`key\`, job_type, policy, attempt, owner, created_at, lease_until
  FROM effects
 ${STUCK_WHERE_MYSQL}
 ORDER BY lease_until, tenant_id, \`key\`
 LIMIT ?`;
const STUCK_COUNTS_MYSQL = `SELECT tenant_id, count(*) AS n FROM effects ${STUCK_WHERE_MYSQL} GROUP BY tenant_id`;

async function readStuckClaimsMysql(
  db: MysqlReader,
  query: { now: Date; jobType: string | null; tenant: string | null; limit: number },
): Promise<{ claims: StuckClaimRow[]; byTenant: Map<string, number> }> {
  const where = [query.now, query.jobType, query.jobType, query.tenant, query.tenant];
  const [claims, counts] = await Promise.all([
    db.query<{
      tenant_id: string;
      key: string;
      job_type: string;
      policy: string;
      attempt: number;
      owner: string | null;
      created_at: Date;
      lease_until: Date;
    }>(STUCK_LIST_MYSQL, [...where, query.limit]),
    db.query<{ tenant_id: string; n: number }>(STUCK_COUNTS_MYSQL, where),
  ]);
  return {
    byTenant: new Map(counts.map((r) => [r.tenant_id, Number(r.n)])),
    claims: claims.map((r) => ({
      tenant: r.tenant_id,
      key: r.key,
      jobType: r.job_type,
      policy: r.policy,
      attempt: r.attempt,
      owner: r.owner,
      createdAt: r.created_at,
      leaseUntil: r.lease_until,
    })),
  };
}

/** Which claims are stuck right now (oldest lease first), and how many per tenant: the scope's tenant, or every tenant for the platform. */
export async function getStuckClaims(
  scope: Scope,
  input: GetStuckClaimsInput = {},
  db: EffectsSource = effectsStore(),
): Promise<StuckClaims> {
  const now = input.now ?? new Date();
  const query = { now, jobType: input.jobType ?? null, tenant: scope.tenant, limit: input.limit ?? 50 };
  const stuck = await byEngine(db, {
    postgres: (pg) => readStuckClaims(pg, { ...query, schema: loadConfig().ONCEBOARD_SCHEMA }),
    mysql: (my) => readStuckClaimsMysql(my, query),
  });
  return {
    total: [...stuck.byTenant.values()].reduce((a, b) => a + b, 0),
    byTenant: stuck.byTenant,
    claims: stuck.claims.map((r) => ({
      tenant: r.tenant,
      key: r.key,
      jobType: r.jobType,
      attempt: r.attempt,
      owner: r.owner,
      createdAt: r.createdAt.toISOString(),
      leaseUntil: r.leaseUntil.toISOString(),
      ageSeconds: Math.round((now.getTime() - r.createdAt.getTime()) / 1000),
      overdueSeconds: Math.round((now.getTime() - r.leaseUntil.getTime()) / 1000),
    })),
  };
}
