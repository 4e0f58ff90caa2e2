import type { Scope } from "../../auth/scope";
import { consoleDatabase } from "../../console/database";
import type { Queryable } from "../../db/types";
import type { StuckClaim } from "./contract";

interface GetStuckClaimsInput {
  jobType?: string | null;
  limit?: number;
  now?: Date;
}

// in_progress past the lease: the worker holding it died and no redelivery has taken it over yet.
// Current state, not a range: a claim stuck for ten days is still stuck. Uses
// effects_status_lease_until_idx; the count per tenant is over every stuck claim, the list is the
// oldest first. Both in one round trip, as JSON. Params: $1 now, $2 job type, $3 tenant, $4 limit.
const STUCK_SQL = `
SELECT
  (SELECT coalesce(json_agg(c ORDER BY lease_until, tenant_id, key), '[]') FROM (
     SELECT tenant_id, key, job_type, attempt, owner, created_at, lease_until
       FROM effects
      WHERE status = 'in_progress' AND lease_until < $1
        AND ($2::text IS NULL OR job_type = $2) AND ($3::text IS NULL OR tenant_id = $3)
      ORDER BY lease_until, tenant_id, key
      LIMIT $4) c) AS claims,
  (SELECT coalesce(json_agg(json_build_array(tenant_id, n)), '[]') FROM (
     SELECT tenant_id, count(*)::float8 AS n
       FROM effects
      WHERE status = 'in_progress' AND lease_until < $1
        AND ($2::text IS NULL OR job_type = $2) AND ($3::text IS NULL OR tenant_id = $3)
      GROUP BY tenant_id) t) AS by_tenant`;

interface StuckClaims {
  claims: StuckClaim[];
  total: number;
  byTenant: Map<string, number>;
}

/** Which claims are stuck right now (oldest lease first), and how many per tenant: the scope's tenant, or every tenant for the platform. */
export async function getStuckClaims(
  scope: Scope,
  input: GetStuckClaimsInput = {},
  db: Queryable = consoleDatabase(),
): Promise<StuckClaims> {
  const now = input.now ?? new Date();
  const { rows } = await db.query<{
    claims: {
      tenant_id: string;
      key: string;
      job_type: string;
      attempt: number;
      owner: string | null;
      created_at: string;
      lease_until: string;
    }[];
    by_tenant: [string, number][];
  }>(STUCK_SQL, [now, input.jobType ?? null, scope.tenant, input.limit ?? 50]);
  const stuck = rows[0];
  if (!stuck) throw new Error("the stuck claims query answered no row");
  const byTenant = new Map(stuck.by_tenant);
  return {
    total: [...byTenant.values()].reduce((a, b) => a + b, 0),
    byTenant,
    claims: stuck.claims.map((r) => ({
      tenant: r.tenant_id,
      key: r.key,
      jobType: r.job_type,
      attempt: r.attempt,
      owner: r.owner,
      createdAt: new Date(r.created_at).toISOString(),
      leaseUntil: new Date(r.lease_until).toISOString(),
      ageSeconds: Math.round((now.getTime() - new Date(r.created_at).getTime()) / 1000),
      overdueSeconds: Math.round((now.getTime() - new Date(r.lease_until).getTime()) / 1000),
    })),
  };
}
