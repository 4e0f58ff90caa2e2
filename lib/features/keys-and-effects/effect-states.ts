import type { Scope } from "../../auth/scope";
import { byEngine, type EffectsSource, effectsStore } from "../../console/effects-store";
import { Keyset } from "../../console/keyset";
import { redactMessage } from "../../console/redact";
import { statusSql, stuckSql } from "../../idempotency/states";
import type { EffectStatus } from "./effects-types";
import { countKeyReuseRefusals } from "./key-reuse-refusals";
import { type AppliedStateFilter, appliedFields, applyStateFilter, type StateFilter } from "./state-filter";
import type { EffectStatesResponse, StateEffect, StateListResponse } from "./states-contract";
import { EFFECT_STATES, type EffectState, effectStateOf } from "./states-types";

/**
 * A state as an SQL condition on effects, written from the library's own rule (stuckSql, the SQL
 * of isStuck) and words (statusSql): the counts and the lists both use it, so they cannot differ.
 * `now` is an SQL expression. A claim with no lease is not stuck (isStuck), hence IS NOT TRUE.
 */
export function effectStateSql(state: EffectState, now: string, alias = "e."): string {
  switch (state) {
    case "stuck":
      return `(${stuckSql(now, alias)})`;
    case "in_progress":
      return `(${alias}status = ${statusSql("in_progress")} AND (${stuckSql(now, alias)}) IS NOT TRUE)`;
    default:
      return `(${alias}status = ${statusSql(state)})`;
  }
}

// The effects of the filter, the one WHERE of the counts and the lists.
// Params: $1 tenant or NULL, $2 from, $3 to, $4 job type or NULL.
const FILTER = `($1::text IS NULL OR e.tenant_id = $1::text)
   AND e.created_at >= $2::timestamptz AND e.created_at < $3::timestamptz
   AND ($4::text IS NULL OR e.job_type = $4::text)`;

// Every state's count in one pass over the filter's effects: one tenant's through its
// (tenant_id, created_at, key) index, every tenant's through the window's partitions alone.
// Params: the filter's, then $5 now.
const COUNTS = `
SELECT ${EFFECT_STATES.map((s) => `count(*) FILTER (WHERE ${effectStateSql(s, "$5::timestamptz")})::int AS ${s}`).join(",\n       ")}
  FROM effects e
 WHERE ${FILTER}`;

/**
 * The lists' sort keys, as the Keys search's: newest created first, then the key (and the tenant
 * across tenants). (created_at, tenant_id, key) is unique: a (tenant_id, key) is unique within
 * its partition, which created_at names.
 */
export const STATE_KEYSET = new Keyset("states", [
  { column: "e.created_at", type: "timestamptz" },
  { column: "e.key", type: "text" },
]);
export const EVERY_TENANT_STATE_KEYSET = new Keyset("states-every-tenant", [
  { column: "e.created_at", type: "timestamptz" },
  { column: "e.tenant_id", type: "text" },
  { column: "e.key", type: "text" },
]);

/** The keyset of a list of `tenant` (null: every tenant). */
export const stateKeysetFor = (tenant: string | null) => (tenant === null ? EVERY_TENANT_STATE_KEYSET : STATE_KEYSET);

/** Whether a state's rule reads the clock (the lease against now): only then is now a parameter. */
const readsTheClock = (state: EffectState) => state === "in_progress" || state === "stuck";

// Params: the filter's, then the cursor's from $5, the limit, and now when the state reads it.
function listSql(state: EffectState, keyset: Keyset): string {
  const limit = 5 + keyset.columns.length;
  return `
SELECT e.tenant_id, e.key, e.job_type, e.status, e.policy, e.attempt, e.error, e.owner, e.lease_until,
       e.created_at, e.updated_at, e.completed_at, e.first_message_id, ${keyset.cursorColumns}
  FROM effects e
 WHERE ${FILTER}
   AND ${effectStateSql(state, `$${limit + 1}::timestamptz`)}
   AND ${keyset.after(5)}
 ORDER BY ${keyset.orderBy}
 LIMIT $${limit}::int`;
}

// The same on MySQL (effects one table: (tenant_id, created_at) and created_at indexes, each ended
// by the primary key). "now" is one bound value, joined in as n.now_at so each state's rule names it.
// Params: now, then the filter's (tenant twice, from, to, job type twice).
const FILTER_MYSQL = `(? IS NULL OR e.tenant_id = ?)
   AND e.created_at >= ? AND e.created_at < ?
   AND (? IS NULL OR e.job_type = ?)`;
const NOW_MYSQL = "CROSS JOIN (SELECT CAST(? AS DATETIME(3)) AS now_at) n";
const COUNTS_MYSQL = `
SELECT ${EFFECT_STATES.map((s) => `COALESCE(SUM(${effectStateSql(s, "n.now_at")}), 0) AS \`${s}\``).join(",\n       ")}
  FROM effects e ${NOW_MYSQL}
 WHERE ${FILTER_MYSQL}`;

// Params: now, the filter's, then the cursor's and the limit.
function listMysql(state: EffectState, keyset: Keyset, after: string): string {
  return `
SELECT e.tenant_id, e.\`key\`, e.job_type, e.status, e.policy, e.attempt, e.error, e.owner, e.lease_until,
       e.created_at, e.updated_at, e.completed_at, e.first_message_id, ${keyset.mysqlCursorColumns}
  FROM effects e ${NOW_MYSQL}
 WHERE ${FILTER_MYSQL}
   AND ${effectStateSql(state, "n.now_at")}
   AND ${after}
 ORDER BY ${keyset.mysqlOrderBy}
 LIMIT ?`;
}

const filterValuesMysql = (f: AppliedStateFilter) => [f.now, f.tenant, f.tenant, f.from, f.to, f.jobType, f.jobType];

interface StateRow {
  tenant_id: string;
  key: string;
  job_type: string;
  status: EffectStatus;
  policy: string;
  attempt: number;
  error: string | null;
  owner: string | null;
  lease_until: Date | null;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
  first_message_id: string | null;
}

const filterValues = (f: AppliedStateFilter) => [f.tenant, f.from, f.to, f.jobType];

/** GET /api/v1/effect-states: every state's count, and the key-reuse refusals', for the filter. */
export async function countEffectStates(
  scope: Scope,
  filter: StateFilter,
  db: EffectsSource = effectsStore(),
): Promise<EffectStatesResponse> {
  const applied = applyStateFilter(scope, filter);
  const [[row], keyReuse] = await Promise.all([
    byEngine(db, {
      postgres: async (pg) => (await pg.query<Record<EffectState, number>>(COUNTS, [...filterValues(applied), applied.now])).rows,
      mysql: (my) => my.query<Record<EffectState, number>>(COUNTS_MYSQL, filterValuesMysql(applied)),
    }),
    countKeyReuseRefusals(applied, db),
  ]);
  const states = EFFECT_STATES.map((state) => ({ state, count: Number(row?.[state] ?? 0) }));
  return {
    ...appliedFields(applied),
    states,
    total: states.reduce((sum, s) => sum + s.count, 0),
    keyReuse,
  };
}

/** GET /api/v1/effect-states/{state}: one state's effects of the filter, newest created first, a keyset page. */
export async function listEffectsInState(
  scope: Scope,
  input: StateFilter & { state: EffectState; cursor?: string; limit: number },
  db: EffectsSource = effectsStore(),
): Promise<StateListResponse> {
  const applied = applyStateFilter(scope, input);
  const keyset = stateKeysetFor(applied.tenant);
  const rows = await byEngine(db, {
    postgres: async (pg) =>
      (
        await pg.query<StateRow>(listSql(input.state, keyset), [
          ...filterValues(applied),
          ...keyset.values(input.cursor),
          input.limit + 1,
          ...(readsTheClock(input.state) ? [applied.now] : []),
        ])
      ).rows,
    mysql: (my) => {
      const after = keyset.mysqlAfter(input.cursor);
      return my.query<StateRow>(listMysql(input.state, keyset, after.sql), [
        ...filterValuesMysql(applied),
        ...after.values,
        input.limit + 1,
      ]);
    },
  });
  const page = keyset.page(rows, input.limit);
  return {
    ...appliedFields(applied),
    state: input.state,
    effects: page.rows.map((r) => toStateEffect(r, applied.now)),
    nextCursor: page.nextCursor,
  };
}

function toStateEffect(r: StateRow, now: Date): StateEffect {
  const inFlight = r.status === "in_progress";
  return {
    tenant: r.tenant_id,
    key: r.key,
    jobType: r.job_type,
    state: effectStateOf({ status: r.status, leaseUntil: r.lease_until }, now),
    status: r.status,
    policy: r.policy,
    attempts: r.attempt,
    error: r.error === null ? null : redactMessage(r.error),
    owner: inFlight ? r.owner : null,
    leaseUntil: inFlight && r.lease_until ? r.lease_until.toISOString() : null,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    completedAt: r.completed_at ? r.completed_at.toISOString() : null,
    firstMessageId: r.first_message_id,
  };
}
