import type { Scope } from "../auth/scope";
import type { StatementQueryable } from "../db/types";
import { consoleDatabase } from "./database";
import type { FindingKind, FindingListResponse, FindingState, FindingSummary } from "./reconciliation-types";
import { redactMessage } from "./redact";

export interface FindingSearch {
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

export class InvalidFindingCursorError extends Error {
  readonly code = "INVALID_INPUT";
}

/**
 * The findings a filter matches, over $1 tenant, $2 platform, $3 state, $4 kind, $5 provider, $6
 * job type, $7 last seen from, $8 last seen before (findingFilterValues): the list and the bulk
 * acknowledge (lib/auth/bulk-kinds.ts) match the same rows. A tenant scope reads rows of its
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

/** The order findings are listed (and bulk-acknowledged) in: newest last seen first. */
export const FINDING_ORDER = "last_seen_at DESC, id DESC";

/** A FindingRow's columns, as toFindingSummary reads them. */
export const FINDING_SUMMARY_COLUMNS = `id::text AS id, provider, kind, tenant_id, job_type, effect_key, provider_object_ids, detail,
       first_seen_at, last_seen_at, state`;

// Keyset-paginated on (last_seen_at, id): the (state, kind, provider, tenant_id, last_seen_at
// desc) index.
const LIST = {
  name: "console_list_findings",
  text: `
SELECT ${FINDING_SUMMARY_COLUMNS},
       to_char(last_seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_at
  FROM reconciliation_findings
 WHERE ${FINDING_FILTER_WHERE}
   AND ($9::timestamptz IS NULL OR (last_seen_at, id) < ($9::timestamptz, $10::bigint))
 ORDER BY ${FINDING_ORDER}
 LIMIT $11`,
};

const CURSOR_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

function decodeCursor(cursor: string): [string, string] {
  try {
    const parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      typeof parsed[0] === "string" &&
      typeof parsed[1] === "string" &&
      CURSOR_AT.test(parsed[0]) &&
      !Number.isNaN(Date.parse(parsed[0])) &&
      /^[1-9]\d{0,18}$/.test(parsed[1]) &&
      BigInt(parsed[1]) <= 9_223_372_036_854_775_807n
    ) {
      return [parsed[0], parsed[1]];
    }
  } catch {
    // falls through
  }
  throw new InvalidFindingCursorError("invalid query: cursor is not one this API returned");
}

function encodeCursor(at: string, id: string): string {
  return Buffer.from(JSON.stringify([at, id])).toString("base64url");
}

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
  const [cursorAt, cursorId] = search.cursor ? decodeCursor(search.cursor) : [null, null];
  const { rows } = await db.query<FindingRow & { cursor_at: string }>({
    ...LIST,
    values: [...findingFilterValues(narrowed, search), cursorAt, cursorId, search.limit + 1],
  });
  const page = rows.slice(0, search.limit);
  const last = page[page.length - 1];
  return {
    tenant: narrowed.tenant,
    findings: page.map(toFindingSummary),
    nextCursor: rows.length > search.limit && last ? encodeCursor(last.cursor_at, last.id) : null,
  };
}
