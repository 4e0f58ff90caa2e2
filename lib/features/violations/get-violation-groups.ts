import type { Scope } from "../../auth/scope";
import { byEngine, type EffectsSource, effectsStore } from "../../console/effects-store";
import type { ViolationGroup, ViolationTotalsResponse } from "./contract";
import {
  VIOLATION_FILTER_MYSQL,
  type ViolationSearch,
  violationFilterSql,
  violationFilterValues,
  violationWindow,
} from "./list-violations";
import { VIOLATION_TOTALS_GROUP_LIMIT } from "./violations-types";

// One line per (tenant, job type, constraint) of the list's own filter (violationFilterSql), from
// the rows themselves: the count and the number of distinct keys are the group's, and no single
// key stands for the group (the Violations page lists every one). Most violations first. Every
// line also carries the totals over all the groups, those past the limit included.
// Params: $1 tenant, $2 from, $3 to, $4 job type, $5 constraint, $6 limit.
const GROUPS_SQL = `
SELECT v.tenant_id, v.job_type, v.constraint_name, count(*)::int AS count, count(DISTINCT v.key)::int AS keys,
       max(v.occurred_at) AS last_seen, (sum(count(*)) OVER ())::int AS total, (count(*) OVER ())::int AS group_count
  FROM uncaught_violation_keys v
 WHERE ${violationFilterSql({ tenant: 1, from: 2, to: 3, jobType: 4, constraint: 5 })}
 GROUP BY v.tenant_id, v.job_type, v.constraint_name
 ORDER BY count(*) DESC, max(v.occurred_at) DESC, v.tenant_id, v.job_type, v.constraint_name
 LIMIT $6`;

// The same on MySQL 8 and MariaDB (window functions over the groups' aggregates on both).
const GROUPS_MYSQL = `
SELECT v.tenant_id, v.job_type, v.constraint_name, count(*) AS count, count(DISTINCT v.\`key\`) AS \`keys\`,
       max(v.occurred_at) AS last_seen, SUM(count(*)) OVER () AS total, count(*) OVER () AS group_count
  FROM uncaught_violation_keys v
 WHERE ${VIOLATION_FILTER_MYSQL}
 GROUP BY v.tenant_id, v.job_type, v.constraint_name
 ORDER BY count(*) DESC, max(v.occurred_at) DESC, v.tenant_id, v.job_type, v.constraint_name
 LIMIT ?`;

interface GroupRow {
  tenant_id: string;
  job_type: string;
  constraint_name: string;
  count: number;
  keys: number;
  last_seen: Date;
  total: number;
  group_count: number;
}

async function readGroups(
  tenant: string | null,
  input: { jobType?: string | null; constraint?: string | null; from: Date; to: Date; limit: number },
  db: EffectsSource,
): Promise<GroupRow[]> {
  const jobType = input.jobType ?? null;
  const constraint = input.constraint ?? null;
  const rows = await byEngine(db, {
    postgres: async (pg) =>
      (await pg.query<GroupRow>(GROUPS_SQL, [tenant, input.from, input.to, jobType, constraint, input.limit])).rows,
    mysql: (my) =>
      my.query<GroupRow>(GROUPS_MYSQL, [
        ...violationFilterValues({ tenant, from: input.from, to: input.to, jobType, constraint }),
        input.limit,
      ]),
  });
  // MySQL answers its counts as BIGINT or DECIMAL: numbers here, as PostgreSQL's ::int.
  return rows.map((r) => ({
    ...r,
    count: Number(r.count),
    keys: Number(r.keys),
    total: Number(r.total),
    group_count: Number(r.group_count),
  }));
}

const toGroup = (r: GroupRow): ViolationGroup => ({
  tenant: r.tenant_id,
  jobType: r.job_type,
  constraint: r.constraint_name,
  count: r.count,
  keys: r.keys,
  lastSeen: new Date(r.last_seen).toISOString(),
});

/** The Overview banner's groups: the scope's uncaught violations per (tenant, job type, constraint) in [from, to). */
export async function getViolationGroups(
  scope: Scope,
  input: { jobType?: string | null; from: Date; to: Date; limit?: number },
  db: EffectsSource = effectsStore(),
): Promise<ViolationGroup[]> {
  return (await readGroups(scope.tenant, { ...input, limit: input.limit ?? 50 }, db)).map(toGroup);
}

/**
 * GET /api/v1/violations/groups: the totals of GET /api/v1/violations with the same filter (the
 * same tenant rule, window and WHERE), per group and in all.
 */
export async function getViolationTotals(
  scope: Scope,
  search: Omit<ViolationSearch, "cursor" | "limit">,
  db: EffectsSource = effectsStore(),
): Promise<ViolationTotalsResponse> {
  const tenant = scope.narrow(search.tenant).tenant;
  const window = violationWindow(search, search.now ?? new Date());
  const rows = await readGroups(tenant, { ...search, ...window, limit: VIOLATION_TOTALS_GROUP_LIMIT }, db);
  return {
    tenant,
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    total: rows[0]?.total ?? 0,
    groupCount: rows[0]?.group_count ?? 0,
    groups: rows.map(toGroup),
  };
}
