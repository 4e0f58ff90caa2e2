import { type AuditEntry, auditInsertSql, auditValues } from "../../auth/audit";
import type { Scope } from "../../auth/scope";
import { auditsWithinRead, byEngine, type EffectsSource, effectsStore } from "../../console/effects-store";
import { Keyset } from "../../console/keyset";
import { mysqlIso } from "../../console/mysql-sql";
import { isStuck } from "../../idempotency/states";
import type { EffectSearchResponse, EffectSummary } from "./contract";
import { CROSS_TENANT_SEARCH_DAYS, type EffectStatus, TENANT_SEARCH_DAYS } from "./effects-types";
import { keyContainsFragment } from "./key-fragment";

export interface EffectSearch {
  /** The tenant asked for: a platform scope that names none searches every tenant; a tenant scope reads its own whatever it says. */
  tenant?: string | null;
  /** A key prefix or any fragment of it ("inv-123" finds "settle:inv-123"), case-insensitive. */
  q?: string;
  status?: EffectStatus;
  jobType?: string;
  from?: Date;
  to?: Date;
  cursor?: string;
  limit: number;
  now?: Date;
}

// Search within one tenant, newest first, keyset-paginated on (created_at, key).
// Each closed partition's Keys index, <partition>_tenant_created_at_idx (tenant_id, created_at, key)
// INCLUDE (first_message_id, status, job_type), built by maintenance once the partition has closed
// so that no claim writes an entry: the page is found in the index alone, walking the tenant's
// entries backwards from the cursor through the partitions newest first (an ordered Append: older
// partitions are not touched once the page is full), the fragment, status and job type tested on
// each entry. The open partition has no Keys index: its part is the tenant's rows of that one day,
// found through the (tenant_id, key) unique index and sorted (~330 at 10M rows a month). Only the page's
// rows are then read from the table, each by its exact (tenant, key, created_at): one partition
// each. A fragment that matches nothing reads the tenant's entries in the range (~10,000 at 10M
// rows and 1,000 tenants), not their rows. Why not a trigram index: it would find a fragment
// without a tenant or an order, and every claim would write its many entries.
// The fragment's test is keyContainsFragment's (key-fragment.ts).
// The upper bound is the cursor, or (to, '') on the first page: (created_at, key) < (to, '') is
// created_at < to, so it is always one index condition. A named statement: planned once per
// connection, not on every search over ~40 partitions.
// With an audit row ($10 on, auditInsertSql), the statement writes it too, its detail's `results`
// counted from the page: the row commits if and only if the search succeeded, in no round trip of
// its own (audited-reads.ts). The every-tenant search below does the same from its hits.
function tenantSearch(audited: boolean) {
  return {
    name: audited ? "console_search_effects_audited" : "console_search_effects",
    text: `
WITH page AS MATERIALIZED (
  SELECT key, created_at
    FROM effects
   WHERE tenant_id = $1
     AND created_at >= $2::timestamptz AND created_at < $3::timestamptz
     AND (created_at, key) < ($4::timestamptz, $5::text)
     AND ($6::text IS NULL OR ${keyContainsFragment("$6")})
     AND ($7::text IS NULL OR status = $7)
     AND ($8::text IS NULL OR job_type = $8)
   ORDER BY created_at DESC, key DESC
   LIMIT $9
)${audited ? `, audited AS (${auditInsertSql(10, { expression: "jsonb_build_object('results', least(count(*), $9 - 1))", from: "page" })})` : ""}
SELECT e.key, e.job_type, e.status, e.policy, e.attempt, e.created_at, e.completed_at, e.duplicate_count, e.first_message_id, e.lease_until,
       to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at
  FROM page p
 CROSS JOIN LATERAL (
        SELECT key, job_type, status, policy, attempt, created_at, completed_at, duplicate_count, first_message_id, lease_until
          FROM effects
         WHERE tenant_id = $1 AND key = p.key AND created_at = p.created_at
           -- The page's range again: true of every p, and known when the statement starts, so
           -- its generic plan opens only the range's partitions for this read, not all ~40.
           AND created_at >= $2::timestamptz AND created_at < $3::timestamptz
         LIMIT 1) e
 ORDER BY p.created_at DESC, p.key DESC`,
  };
}
const SEARCH = tenantSearch(false);
const SEARCH_AUDITED = tenantSearch(true);

// Search across every tenant (a platform scope that named none), newest first, keyset-paginated on
// (created_at, tenant_id, key). No index spans tenants (each Keys index leads with the tenant), so
// this reads the rows of the range: it looks back CROSS_TENANT_SEARCH_DAYS by default, the
// partitions outside it pruned, and stops at the page once sorted. Same fragment rules as above.
function everyTenantSearch(audited: boolean) {
  return {
    name: audited ? "console_search_effects_every_tenant_audited" : "console_search_effects_every_tenant",
    text: `
WITH hits AS MATERIALIZED (
  SELECT tenant_id, key, job_type, status, policy, attempt, created_at, completed_at, duplicate_count, first_message_id, lease_until,
         to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at
    FROM effects
   WHERE created_at >= $1::timestamptz AND created_at < $2::timestamptz
     AND (created_at, tenant_id, key) < ($3::timestamptz, $4::text, $5::text)
     AND ($6::text IS NULL OR ${keyContainsFragment("$6")})
     AND ($7::text IS NULL OR status = $7)
     AND ($8::text IS NULL OR job_type = $8)
   ORDER BY created_at DESC, tenant_id DESC, key DESC
   LIMIT $9
)${audited ? `, audited AS (${auditInsertSql(10, { expression: "jsonb_build_object('results', least(count(*), $9 - 1))", from: "hits" })})` : ""}
SELECT * FROM hits ORDER BY created_at DESC, tenant_id DESC, key DESC`,
  };
}
const SEARCH_EVERY_TENANT = everyTenantSearch(false);
const SEARCH_EVERY_TENANT_AUDITED = everyTenantSearch(true);

// The two searches on MySQL, where effects is one table: (tenant_id, created_at) is
// effects_tenant_created_at_idx, whose entries end with the primary key's `key`, so one tenant's
// page is one backward range of it; every tenant's is effects_created_at_idx's, ended by
// (tenant_id, key) the same way. LOCATE, not LIKE: a "%" or "_" in the fragment is a literal.
// The bound is the cursor's, or (to, '') on the first page, as on PostgreSQL.
const searchMysql = (everyTenant: boolean) => `
SELECT ${everyTenant ? "tenant_id, " : ""}\`key\`, job_type, status, policy, attempt, created_at, completed_at, duplicate_count,
       first_message_id, lease_until, ${mysqlIso("created_at")} AS cursor_at
  FROM effects
 WHERE ${everyTenant ? "" : "tenant_id = ? AND "}created_at >= ? AND created_at < ?
   AND (created_at, ${everyTenant ? "tenant_id, " : ""}\`key\`) < (?, ${everyTenant ? "?, " : ""}?)
   AND (? IS NULL OR LOCATE(?, LOWER(\`key\`)) > 0)
   AND (? IS NULL OR status = ?)
   AND (? IS NULL OR job_type = ?)
 ORDER BY created_at DESC, ${everyTenant ? "tenant_id DESC, " : ""}\`key\` DESC
 LIMIT ?`;
const SEARCH_MYSQL = searchMysql(false);
const SEARCH_EVERY_TENANT_MYSQL = searchMysql(true);

/** A cursor's time part ('…T12:00:00.123456Z') as MySQL compares it with a DATETIME (UTC session). */
const mysqlBoundTime = (iso: string) => iso.replace("T", " ").replace("Z", "");

/**
 * The sort keys of the two searches. The effects table has no numeric id and the library's
 * tables take no console column: (created_at, tenant_id, key) is unique all the same, since a
 * (tenant_id, key) is unique within its partition and created_at names the partition. Their SQL
 * above writes the bound as (to, '') on the first page rather than after()'s "NULL or", so the
 * partitions' index walk keeps one index condition; the ORDER BY is the same.
 */
export const EFFECT_KEYSET = new Keyset("keys", [
  { column: "created_at", type: "timestamptz" },
  { column: "key", type: "text" },
]);
export const EVERY_TENANT_EFFECT_KEYSET = new Keyset("keys-every-tenant", [
  { column: "created_at", type: "timestamptz" },
  { column: "tenant_id", type: "text" },
  { column: "key", type: "text" },
]);

interface SearchRow {
  tenant_id?: string;
  key: string;
  job_type: string;
  status: EffectStatus;
  policy: string;
  attempt: number;
  created_at: Date;
  completed_at: Date | null;
  duplicate_count: number;
  first_message_id: string | null;
  lease_until: Date | null;
  cursor_at: string;
}

/**
 * GET /api/v1/effects: the scope's tenant's (or the one a platform scope names) effects matching a
 * key fragment and filters, newest first; a platform scope that names none searches every tenant.
 */
export async function searchEffects(
  scope: Scope,
  search: EffectSearch,
  db: EffectsSource = effectsStore(),
): Promise<EffectSearchResponse> {
  return (await readSearch(scope, search, db)).response;
}

/**
 * searchEffects, given its audit row (detail: the filters; the statement adds how many effects the
 * page shows): on PostgreSQL the search's statement writes it (`audited`), committed if and only if
 * the search succeeded. On a MySQL store, whose audit_log is in the console's PostgreSQL, or effects
 * distributed by Citus (auditsWithinRead), it writes nothing: the caller writes the row after the search.
 */
export async function readSearch(
  scope: Scope,
  search: EffectSearch,
  db: EffectsSource = effectsStore(),
  audit?: AuditEntry,
): Promise<{ response: EffectSearchResponse; audited: boolean }> {
  const audited = audit !== undefined && (await auditsWithinRead(db));
  const tenant = scope.narrow(search.tenant).tenant;
  const now = search.now ?? new Date();
  const days = tenant === null ? CROSS_TENANT_SEARCH_DAYS : TENANT_SEARCH_DAYS;
  const from = search.from ?? new Date(now.getTime() - days * 86_400_000);
  const to = search.to ?? new Date(now.getTime() + 60_000);
  const keyset = tenant === null ? EVERY_TENANT_EFFECT_KEYSET : EFFECT_KEYSET;
  // The first page's bound, (to, '') or (to, '', ''): every row before `to` (no text sorts below '').
  const bound = search.cursor ? keyset.decode(search.cursor) : [to.toISOString(), ...keyset.columns.slice(1).map(() => "")];
  const q = search.q?.trim() ? search.q.trim().toLowerCase() : null;
  const status = search.status ?? null;
  const jobType = search.jobType ?? null;
  const rows = await byEngine(db, {
    postgres: async (pg) => {
      const filters = [q, status, jobType, search.limit + 1];
      const auditing = audited && audit ? auditValues(audit) : [];
      return (
        tenant === null
          ? await pg.query<SearchRow>({
              ...(audited ? SEARCH_EVERY_TENANT_AUDITED : SEARCH_EVERY_TENANT),
              values: [from, to, ...bound, ...filters, ...auditing],
            })
          : await pg.query<SearchRow>({
              ...(audited ? SEARCH_AUDITED : SEARCH),
              values: [tenant, from, to, ...bound, ...filters, ...auditing],
            })
      ).rows;
    },
    mysql: (my) => {
      const [at = "", ...rest] = bound;
      const values = [from, to, mysqlBoundTime(at), ...rest, q, q, status, status, jobType, jobType, search.limit + 1];
      return tenant === null
        ? my.query<SearchRow>(SEARCH_EVERY_TENANT_MYSQL, values)
        : my.query<SearchRow>(SEARCH_MYSQL, [tenant, ...values]);
    },
  });
  const page = rows.slice(0, search.limit);
  const effects: EffectSummary[] = page.map((r) => ({
    tenant: r.tenant_id ?? (tenant as string),
    key: r.key,
    jobType: r.job_type,
    status: r.status,
    policy: r.policy,
    attempt: r.attempt,
    createdAt: r.created_at.toISOString(),
    completedAt: r.completed_at ? r.completed_at.toISOString() : null,
    duplicateCount: r.duplicate_count,
    firstMessageId: r.first_message_id,
    stuck: isStuck({ status: r.status, leaseUntil: r.lease_until }, now),
  }));
  const last = page[page.length - 1];
  return {
    response: {
      tenant,
      effects,
      nextCursor:
        rows.length > search.limit && last
          ? keyset.encode(tenant === null ? [last.cursor_at, last.tenant_id ?? "", last.key] : [last.cursor_at, last.key])
          : null,
    },
    audited,
  };
}
