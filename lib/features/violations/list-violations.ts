import type { Scope } from "../../auth/scope";
import { byEngine, type EffectsSource, effectsStore } from "../../console/effects-store";
import { Keyset } from "../../console/keyset";
import { redactMessage } from "../../console/redact";
import type { ListedViolation, ViolationListResponse } from "./contract";

export interface ViolationSearch {
  /** The tenant asked for: a platform scope narrows to it; a tenant scope reads its own whatever it says. */
  tenant?: string | null;
  jobType?: string;
  constraint?: string;
  from?: Date;
  to?: Date;
  cursor?: string;
  limit: number;
  now?: Date;
}

/** Lists without `from` look this far back (the rows themselves live as long as the effects). */
const DEFAULT_VIOLATION_DAYS = 90;

/**
 * uncaught_violation_keys (library migration 0008), newest first, ties by seq: the numeric
 * insertion order the console's migration 20261206020000_keyset_order gives the rows (their id is
 * a uuid the worker picks: unique, but no order anyone declared). Served by (tenant_id,
 * occurred_at, seq) for one tenant, (occurred_at, seq) for every tenant.
 */
export const VIOLATION_KEYSET = new Keyset("violations", [
  { column: "v.occurred_at", type: "timestamptz" },
  { column: "v.seq", type: "bigint" },
]);

/**
 * The list's filter as one WHERE, which its totals (get-violation-groups.ts) share: the rows they
 * count are the rows the list pages through. Each field is named by its parameter's position.
 */
export function violationFilterSql($: { tenant: number; from: number; to: number; jobType: number; constraint: number }): string {
  return `($${$.tenant}::text IS NULL OR v.tenant_id = $${$.tenant}::text)
   AND v.occurred_at >= $${$.from}::timestamptz AND v.occurred_at < $${$.to}::timestamptz
   AND ($${$.jobType}::text IS NULL OR v.job_type = $${$.jobType}::text)
   AND ($${$.constraint}::text IS NULL OR v.constraint_name = $${$.constraint}::text)`;
}

/** violationFilterSql on MySQL: `?` placeholders, bound by violationFilterValues in this order. */
export const VIOLATION_FILTER_MYSQL = `(? IS NULL OR v.tenant_id = ?)
   AND v.occurred_at >= ? AND v.occurred_at < ?
   AND (? IS NULL OR v.job_type = ?)
   AND (? IS NULL OR v.constraint_name = ?)`;

export function violationFilterValues(f: {
  tenant: string | null;
  from: Date;
  to: Date;
  jobType: string | null;
  constraint: string | null;
}): unknown[] {
  return [f.tenant, f.tenant, f.from, f.to, f.jobType, f.jobType, f.constraint, f.constraint];
}

/** The list's window: [from, to), by default the last DEFAULT_VIOLATION_DAYS to a minute from now. */
export function violationWindow(search: { from?: Date; to?: Date }, now: Date): { from: Date; to: Date } {
  return {
    from: search.from ?? new Date(now.getTime() - DEFAULT_VIOLATION_DAYS * 86_400_000),
    to: search.to ?? new Date(now.getTime() + 60_000),
  };
}

const LIST = {
  name: "console_list_violations",
  text: `
SELECT v.id::text AS id, v.occurred_at, v.tenant_id, v.job_type, v.constraint_name, v.key, v.message_id, v.message,
       ${VIOLATION_KEYSET.cursorColumns}
  FROM uncaught_violation_keys v
 WHERE ${violationFilterSql({ tenant: 1, from: 2, to: 3, jobType: 6, constraint: 7 })}
   AND ${VIOLATION_KEYSET.after(4)}
 ORDER BY ${VIOLATION_KEYSET.orderBy}
 LIMIT $8`,
};

// The same on MySQL (uncaught_violation_keys there has the same columns, seq AUTO_INCREMENT, and
// the same two indexes). The cursor's condition is spliced in with its values after the filter's.
const listMysql = (after: string) => `
SELECT v.id, v.occurred_at, v.tenant_id, v.job_type, v.constraint_name, v.\`key\`, v.message_id, v.message,
       ${VIOLATION_KEYSET.mysqlCursorColumns}
  FROM uncaught_violation_keys v
 WHERE ${VIOLATION_FILTER_MYSQL}
   AND ${after}
 ORDER BY ${VIOLATION_KEYSET.mysqlOrderBy}
 LIMIT ?`;

/** A row of uncaught_violation_keys as the reads select it (occurred_at a string when it comes through json). */
export interface ViolationRow {
  id: string;
  occurred_at: Date | string;
  tenant_id: string;
  job_type: string;
  constraint_name: string;
  key: string;
  message_id: string | null;
  message: string | null;
}

/** A stored violation as the console shows it: its message through the redaction hook. */
export function toListedViolation(r: ViolationRow): ListedViolation {
  return {
    id: r.id,
    occurredAt: new Date(r.occurred_at).toISOString(),
    tenant: r.tenant_id,
    jobType: r.job_type,
    constraint: r.constraint_name,
    key: r.key,
    messageId: r.message_id,
    message: r.message === null ? null : redactMessage(r.message),
  };
}

/** GET /api/v1/violations: every uncaught violation (one row per affected key and time) of the scope's tenant (a platform scope: every tenant, or `search.tenant`), newest first. */
export async function listViolations(
  scope: Scope,
  search: ViolationSearch,
  db: EffectsSource = effectsStore(),
): Promise<ViolationListResponse> {
  const tenant = scope.narrow(search.tenant).tenant;
  const now = search.now ?? new Date();
  const { from, to } = violationWindow(search, now);
  const jobType = search.jobType ?? null;
  const constraint = search.constraint ?? null;
  const rows = await byEngine(db, {
    postgres: async (pg) =>
      (
        await pg.query<ViolationRow>({
          ...LIST,
          values: [tenant, from, to, ...VIOLATION_KEYSET.values(search.cursor), jobType, constraint, search.limit + 1],
        })
      ).rows,
    mysql: (my) => {
      const after = VIOLATION_KEYSET.mysqlAfter(search.cursor);
      return my.query<ViolationRow>(listMysql(after.sql), [
        ...violationFilterValues({ tenant, from, to, jobType, constraint }),
        ...after.values,
        search.limit + 1,
      ]);
    },
  });
  const page = VIOLATION_KEYSET.page(rows, search.limit);
  return { tenant, violations: page.rows.map(toListedViolation), nextCursor: page.nextCursor };
}
