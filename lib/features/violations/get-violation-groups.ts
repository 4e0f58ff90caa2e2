import type { Scope } from "../../auth/scope";
import { consoleDatabase } from "../../console/database";
import type { Queryable } from "../../db/types";
import type { ViolationGroup } from "./contract";

// One line per (tenant, job type, constraint) over the range, from the rows themselves: the count
// and the number of distinct keys are the group's, and no single key stands for the group (the
// Violations page lists every one). Most violations first.
const GROUPS_SQL = `
SELECT tenant_id, job_type, constraint_name, count(*)::int AS count, count(DISTINCT key)::int AS keys, max(occurred_at) AS last_seen
  FROM uncaught_violation_keys
 WHERE ($1::text IS NULL OR tenant_id = $1)
   AND ($2::text IS NULL OR job_type = $2)
   AND occurred_at >= $3 AND occurred_at < $4
 GROUP BY tenant_id, job_type, constraint_name
 ORDER BY count(*) DESC, max(occurred_at) DESC, tenant_id, job_type, constraint_name
 LIMIT $5`;

/** The Overview banner's groups: the scope's uncaught violations per (tenant, job type, constraint) in [from, to). */
export async function getViolationGroups(
  scope: Scope,
  input: { jobType?: string | null; from: Date; to: Date; limit?: number },
  db: Queryable = consoleDatabase(),
): Promise<ViolationGroup[]> {
  const { rows } = await db.query<{
    tenant_id: string;
    job_type: string;
    constraint_name: string;
    count: number;
    keys: number;
    last_seen: Date;
  }>(GROUPS_SQL, [scope.tenant, input.jobType ?? null, input.from, input.to, input.limit ?? 50]);
  return rows.map((r) => ({
    tenant: r.tenant_id,
    jobType: r.job_type,
    constraint: r.constraint_name,
    count: r.count,
    keys: r.keys,
    lastSeen: new Date(r.last_seen).toISOString(),
  }));
}
