import type { Scope } from "../../auth/scope";
import { byEngine, type EffectsSource, effectsStore } from "../../console/effects-store";
import { Keyset } from "../../console/keyset";
import { redactMessage } from "../../console/redact";
import type { ListedViolation, ViolationListResponse } from "./contract";

interface ViolationSearch {
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

const LIST = {
  name: "console_list_violations",
  text: `
SELECT v.id::text AS id, v.occurred_at, v.tenant_id, v.job_type, v.constraint_name, v.key, v.message_id, v.message,
       ${VIOLATION_KEYSET.cursorColumns}
  FROM uncaught_violation_keys v
 WHERE ($1::text IS NULL OR v.tenant_id = $1)
   AND v.occurred_at >= $2::timestamptz AND v.occurred_at < $3::timestamptz
   AND ${VIOLATION_KEYSET.after(4)}
   AND ($6::text IS NULL OR v.job_type = $6)
   AND ($7::text IS NULL OR v.constraint_name = $7)
 ORDER BY ${VIOLATION_KEYSET.orderBy}
 LIMIT $8`,
};

// The same on MySQL (uncaught_violation_keys there has the same columns, seq AUTO_INCREMENT, and
// the same two indexes). The cursor's condition is spliced in with its values after the range's.
const listMysql = (after: string) => `
SELECT v.id, v.occurred_at, v.tenant_id, v.job_type, v.constraint_name, v.\`key\`, v.message_id, v.message,
       ${VIOLATION_KEYSET.mysqlCursorColumns}
  FROM uncaught_violation_keys v
 WHERE (? IS NULL OR v.tenant_id = ?)
   AND v.occurred_at >= ? AND v.occurred_at < ?
   AND ${after}
   AND (? IS NULL OR v.job_type = ?)
   AND (? IS NULL OR v.constraint_name = ?)
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
  const from = search.from ?? new Date(now.getTime() - DEFAULT_VIOLATION_DAYS * 86_400_000);
  const to = search.to ?? new Date(now.getTime() + 60_000);
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
        tenant,
        tenant,
        from,
        to,
        ...after.values,
        jobType,
        jobType,
        constraint,
        constraint,
        search.limit + 1,
      ]);
    },
  });
  const page = VIOLATION_KEYSET.page(rows, search.limit);
  return { tenant, violations: page.rows.map(toListedViolation), nextCursor: page.nextCursor };
}
