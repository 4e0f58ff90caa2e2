import type { Scope } from "../../auth/scope";
import { byEngine, type EffectsSource, effectsStore } from "../../console/effects-store";
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

const GROUPS_MYSQL = `
SELECT tenant_id, job_type, constraint_name, count(*) AS count, count(DISTINCT \`key\`) AS \`keys\`, max(occurred_at) AS last_seen
  FROM uncaught_violation_keys
 WHERE (? IS NULL OR tenant_id = ?)
   AND (? IS NULL OR job_type = ?)
   AND occurred_at >= ? AND occurred_at < ?
 GROUP BY tenant_id, job_type, constraint_name
 ORDER BY count(*) DESC, max(occurred_at) DESC, tenant_id, job_type, constraint_name
 LIMIT ?`;

interface GroupRow {
  tenant_id: string;
  job_type: string;
  constraint_name: string;
  count: number;
  keys: number;
  last_seen: Date;
}

/** The Overview banner's groups: the scope's uncaught violations per (tenant, job type, constraint) in [from, to). */
export async function getViolationGroups(
  scope: Scope,
  input: { jobType?: string | null; from: Date; to: Date; limit?: number },
  db: EffectsSource = effectsStore(),
): Promise<ViolationGroup[]> {
  const jobType = input.jobType ?? null;
  const limit = input.limit ?? 50;
  const rows = await byEngine(db, {
    postgres: async (pg) => (await pg.query<GroupRow>(GROUPS_SQL, [scope.tenant, jobType, input.from, input.to, limit])).rows,
    mysql: (my) => my.query<GroupRow>(GROUPS_MYSQL, [scope.tenant, scope.tenant, jobType, jobType, input.from, input.to, limit]),
  });
  return rows.map((r) => ({
    tenant: r.tenant_id,
    jobType: r.job_type,
    constraint: r.constraint_name,
    count: Number(r.count),
    keys: Number(r.keys),
    lastSeen: new Date(r.last_seen).toISOString(),
  }));
}
