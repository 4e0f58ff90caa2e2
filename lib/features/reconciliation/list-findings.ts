import type { Scope } from "../../auth/scope";
import { consoleDatabase } from "../../console/database";
import { Keyset } from "../../console/keyset";
import { redactMessage } from "../../console/redact";
import type { StatementQueryable } from "../../db/types";
import type { FindingListResponse, FindingSummary } from "./contract";
import type { FindingKind, FindingState } from "./reconciliation-types";

interface FindingSearch {
  /** The tenant asked for: a platform scope narrows to it; a tenant scope reads its own whatever it says. */
  tenant?: string | null;
  kind?: FindingKind;
  provider?: string;
  jobType?: string;
  state: FindingState;
  /** last_seen_at bounds. */
  from?: Date;
  to?: Date;
  cursor?: string;
  limit: number;
}

/**
 * The findings a filter matches, over $1 tenant, $2 platform, $3 state, $4 kind, $5 provider, $6
 * job type, $7 last seen from, $8 last seen before (findingFilterValues): the list and the bulk
 * acknowledge (lib/features/bulk-actions/bulk-kinds.ts) match the same rows. A tenant scope reads rows of its
 * tenant only: a finding whose provider object named no tenant (tenant_id NULL) is the platform's
 * alone. $1 NULL with $2 true is a platform scope that named no tenant.
 */
export const FINDING_FILTER_WHERE = `state = $3
   AND (CASE WHEN $1::text IS NULL THEN $2::boolean ELSE tenant_id = $1 END)
   AND ($4::text IS NULL OR kind = $4)
   AND ($5::text IS NULL OR provider = $5)
   AND ($6::text IS NULL OR job_type = $6)
   AND ($7::timestamptz IS NULL OR last_seen_at >= $7)
   AND ($8::timestamptz IS NULL OR last_seen_at < $8)`;

/** The filter's values for FINDING_FILTER_WHERE's $1–$8, the tenant from the (narrowed) scope. */
export function findingFilterValues(
  narrowed: Pick<Scope, "tenant" | "platform">,
  filter: {
    state: FindingState;
    kind?: string | null;
    provider?: string | null;
    jobType?: string | null;
    from?: Date | null;
    to?: Date | null;
  },
): unknown[] {
  return [
    narrowed.tenant,
    narrowed.platform,
    filter.state,
    filter.kind ?? null,
    filter.provider ?? null,
    filter.jobType ?? null,
    filter.from ?? null,
    filter.to ?? null,
  ];
}

/**
 * The order findings are listed (and bulk-acknowledged) in: newest last seen first, then the
 * newest id. Every finding of one run shares its last_seen_at, so the id decides most of the
 * order: it is the bigint column, named through the table (a bare "id" in ORDER BY would be
 * FINDING_SUMMARY_COLUMNS' text alias: 9 before 10).
 */
const FINDING_KEYSET = new Keyset("findings", [
  { column: "reconciliation_findings.last_seen_at", type: "timestamptz" },
  { column: "reconciliation_findings.id", type: "bigint" },
]);
export const FINDING_ORDER = FINDING_KEYSET.orderBy;

/** A FindingRow's columns, as toFindingSummary reads them. */
export const FINDING_SUMMARY_COLUMNS = `id::text AS id, provider, kind, tenant_id, job_type, effect_key, provider_object_ids, detail,
       first_seen_at, last_seen_at, state`;

// Keyset-paginated on (last_seen_at, id): the (state, kind, provider, tenant_id, last_seen_at
// desc) index.
const LIST = {
  name: "console_list_findings",
  text: `
SELECT ${FINDING_SUMMARY_COLUMNS}, ${FINDING_KEYSET.cursorColumns}
  FROM reconciliation_findings
 WHERE ${FINDING_FILTER_WHERE}
   AND ${FINDING_KEYSET.after(9)}
 ORDER BY ${FINDING_ORDER}
 LIMIT $11`,
};

export interface FindingRow {
  id: string;
  provider: string;
  kind: FindingKind;
  tenant_id: string | null;
  job_type: string | null;
  effect_key: string | null;
  provider_object_ids: string[];
  detail: string;
  first_seen_at: Date;
  last_seen_at: Date;
  state: FindingState;
}

export function toFindingSummary(r: FindingRow): FindingSummary {
  return {
    id: r.id,
    provider: r.provider,
    kind: r.kind,
    tenant: r.tenant_id,
    jobType: r.job_type,
    effectKey: r.effect_key,
    providerObjectIds: r.provider_object_ids,
    // The reconciler's sentence can quote a stored value: through the redaction hook.
    detail: redactMessage(r.detail),
    firstSeenAt: r.first_seen_at.toISOString(),
    lastSeenAt: r.last_seen_at.toISOString(),
    state: r.state,
  };
}

/** GET /api/v1/reconciliation/findings: the scope's findings in one state (open by default), newest last seen first. */
export async function listFindings(
  scope: Scope,
  search: FindingSearch,
  db: StatementQueryable = consoleDatabase(),
): Promise<FindingListResponse> {
  const narrowed = scope.narrow(search.tenant);
  const { rows } = await db.query<FindingRow>({
    ...LIST,
    values: [...findingFilterValues(narrowed, search), ...FINDING_KEYSET.values(search.cursor), search.limit + 1],
  });
  const page = FINDING_KEYSET.page(rows, search.limit);
  return { tenant: narrowed.tenant, findings: page.rows.map(toFindingSummary), nextCursor: page.nextCursor };
}
