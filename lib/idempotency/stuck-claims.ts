import type { TextQueryable } from "./maintenance-settings";
import { queryingIn, schemaNameOf } from "./schema";
import { stuckSql } from "./states";

/** One stuck claim (states.ts: isStuck), as an operator sees it. */
export interface StuckClaimRow {
  tenant: string;
  key: string;
  jobType: string;
  policy: string;
  attempt: number;
  owner: string | null;
  createdAt: Date;
  leaseUntil: Date;
}

export interface StuckClaimsQuery {
  /** The instant the leases are compared with (default: now). */
  now?: Date;
  /** One tenant; null or unset: every tenant. */
  tenant?: string | null;
  jobType?: string | null;
  /** How many claims to list, oldest lease first (the counts are over every match). */
  limit: number;
  schema?: string;
}

export interface StuckClaims {
  /** The first `limit` matches, oldest lease first, then tenant and key. */
  claims: StuckClaimRow[];
  /** How many match, per tenant. */
  byTenant: Map<string, number>;
}

// The list and the per-tenant counts in one round trip, as JSON. The condition is the library's one
// rule (stuckSql); effects_status_lease_until_idx serves it. Current state, not a range: a claim
// stuck for ten days is still stuck. Params: $1 now, $2 job type, $3 tenant, $4 limit.
const WHERE = `WHERE ${stuckSql("$1::timestamptz")}
        AND ($2::text IS NULL OR job_type = $2::text) AND ($3::text IS NULL OR tenant_id = $3::text)`;
const STUCK_CLAIMS = `
SELECT
  (SELECT coalesce(json_agg(c ORDER BY lease_until, tenant_id, key), '[]') FROM (
     SELECT tenant_id, key, job_type, policy, attempt, owner, created_at, lease_until
       FROM onceboard.effects
      ${WHERE}
      ORDER BY lease_until, tenant_id, key
      LIMIT $4::int) c) AS claims,
  (SELECT coalesce(json_agg(json_build_array(tenant_id, n)), '[]') FROM (
     SELECT tenant_id, count(*)::float8 AS n
       FROM onceboard.effects
      ${WHERE}
      GROUP BY tenant_id) t) AS by_tenant`;

/** The one read of stuck claims: the list and the counts an operator's view shows. */
export async function readStuckClaims(queryable: TextQueryable, query: StuckClaimsQuery): Promise<StuckClaims> {
  const db = queryingIn(queryable, schemaNameOf(query.schema));
  const { rows } = await db.query<{
    claims: {
      tenant_id: string;
      key: string;
      job_type: string;
      policy: string;
      attempt: number;
      owner: string | null;
      created_at: string;
      lease_until: string;
    }[];
    by_tenant: [string, number][];
  }>(STUCK_CLAIMS, [query.now ?? new Date(), query.jobType ?? null, query.tenant ?? null, Math.max(0, Math.trunc(query.limit))]);
  const row = rows[0];
  if (!row) throw new Error("the stuck claims query answered no row");
  return {
    byTenant: new Map(row.by_tenant),
    claims: row.claims.map((r) => ({
      tenant: r.tenant_id,
      key: r.key,
      jobType: r.job_type,
      policy: r.policy,
      attempt: r.attempt,
      owner: r.owner,
      createdAt: new Date(r.created_at),
      leaseUntil: new Date(r.lease_until),
    })),
  };
}
