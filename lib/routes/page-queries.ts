import { z } from "zod";
import { ApiError, toApiError } from "../api/errors";
import type { InvalidPageQuery } from "../api/page-query-types";
import { parseSearchParams } from "../api/parse";
import { cursorParam } from "../console/common-contract";
import { AUDIT_FILTER_KEYS } from "../features/audit/audit-page-types";
import { auditQuery } from "../features/audit/contract";
import { effectSearchQuery } from "../features/keys-and-effects/contract";
import { stateKeysetFor } from "../features/keys-and-effects/effect-states";
import { KEY_REUSE_KEYSET } from "../features/keys-and-effects/key-reuse-refusals";
import { type KeysPageParams, keysPageParams } from "../features/keys-and-effects/keys-params";
import { keysSearchUrl } from "../features/keys-and-effects/keys-types";
import { EFFECT_KEYSET, EVERY_TENANT_EFFECT_KEYSET } from "../features/keys-and-effects/search-effects";
import { stateListQuery } from "../features/keys-and-effects/states-contract";
import { BROWSE_LISTS, type BrowseList, DEFAULT_BROWSE_LIST, KEY_REUSE } from "../features/keys-and-effects/states-types";
import { overviewQuery } from "../features/overview/contract";
import { isKnownJobType } from "../features/overview/job-type-known";
import { findingsQuery } from "../features/reconciliation/contract";
import { type FindingFilters, findingSearch } from "../features/reconciliation/reconciliation-types";
import { type GapsQuery, parseGapsQuery } from "../features/retention-and-gaps/gaps-query";
import { parseRetentionQuery, type RetentionQuery } from "../features/retention-and-gaps/retention-query";
import { SESSION_KEYSET, TOKEN_KEYSET } from "../features/tokens-and-sessions/admin-keysets";
import { ADMIN_PAGE_KEYS, type AdminPageParams } from "../features/tokens-and-sessions/admin-page-types";
import { adminListQuery } from "../features/tokens-and-sessions/contract";
import { violationsQuery } from "../features/violations/contract";
import { VIOLATION_KEYSET } from "../features/violations/list-violations";

/**
 * The query strings of the console's pages, parsed as their API routes parse them. A page shows
 * the error beside its form, holding what was typed (InvalidPageQuery, components/ui/
 * invalid-query-alert.tsx), with a 200 it cannot change once it streams;
 * proxy.ts asks pageQueryError() for the same URL first, and the console's server
 * (scripts/console-server.ts) answers it with the 4xx status (lib/api/page-status.ts).
 */

/** A page's search params as Next hands them: a repeated key keeps its last value, as the API does. */
export function lastValues(input: Record<string, string | string[] | undefined> | URLSearchParams): URLSearchParams {
  const out = new URLSearchParams();
  if (input instanceof URLSearchParams) {
    for (const [name, value] of input) out.set(name, value);
    return out;
  }
  for (const [name, value] of Object.entries(input)) {
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    if (last !== undefined) out.set(name, last);
  }
  return out;
}

/** `error` as an InvalidPageQuery; anything but INVALID_INPUT is not the link's fault and is thrown on. */
export function invalidPageQuery(typed: URLSearchParams, error: unknown): InvalidPageQuery {
  const e = toApiError(error);
  if (e.code !== "INVALID_INPUT") throw error;
  return { typed: Object.fromEntries(typed), message: e.message, code: e.code };
}

/** The Keys page's URL: its own fields, and the search it implies checked by the API's rules (the same 400 text). */
export function parseKeysPageQuery(
  raw: URLSearchParams,
  session: { tenantId: string | null },
): { params: KeysPageParams; search: ReturnType<typeof effectSearchQuery.parse> } {
  const parsed = parseSearchParams(keysPageParams, raw);
  // A tenant session always searches its own tenant; a platform session names one, or none (every tenant).
  const params = { ...parsed, tenant: session.tenantId ?? parsed.tenant };
  const platform = session.tenantId === null;
  const search = parseSearchParams(effectSearchQuery, new URL(keysSearchUrl(params, platform), "http://console.local"));
  // A cursor of another search (every tenant's, one tenant's) or none this API made: the page says so.
  if (search.cursor) (params.tenant === undefined ? EVERY_TENANT_EFFECT_KEYSET : EFFECT_KEYSET).decode(search.cursor);
  return { params, search };
}

const adminPageFields = z.object({
  tenant: adminListQuery.shape.tenant,
  tokensCursor: cursorParam,
  sessionsCursor: cursorParam,
});

/**
 * The Tokens & sessions page's URL: the tenant as GET /api/v1/tokens reads it, and each table's
 * cursor checked against its own list (the other table's, or one the API never made, is a 400
 * naming it).
 */
export function parseAdminPageQuery(raw: URLSearchParams): AdminPageParams {
  const params = parseSearchParams(adminPageFields, pageValues(raw, { tenantId: null }, ADMIN_PAGE_KEYS));
  for (const [name, keyset] of [
    ["tokensCursor", TOKEN_KEYSET],
    ["sessionsCursor", SESSION_KEYSET],
  ] as const) {
    const cursor = params[name];
    try {
      if (cursor) keyset.decode(cursor);
    } catch {
      throw new ApiError("INVALID_INPUT", `invalid query: ${name} is not one this list returned`, [
        { path: name, message: "is not one this list returned" },
      ]);
    }
  }
  return params;
}

/** A session as the pages' parsers need it: a tenant session's ?tenant= is its own, whatever the URL says. */
interface PageQuerySession {
  tenantId: string | null;
}

/** The values a page reads: the last of each, empty ones unset (as its form submits them), `only` these names. */
function pageValues(raw: URLSearchParams, session: PageQuerySession, only?: readonly string[]): URLSearchParams {
  const out = new URLSearchParams();
  for (const [name, value] of lastValues(raw)) {
    if (value === "" || (only && !only.includes(name))) continue;
    if (name === "tenant" && session.tenantId !== null) continue;
    out.set(name, value);
  }
  return out;
}

/**
 * One page's URL parse, the one the page renders from and proxy.ts answers the status of: `values`
 * picks what the page reads (the last of each, for this session; what an invalid state shows as
 * typed), `parse` checks them by the API's rules and throws its 400.
 */
export interface PageQuery<Q> {
  values(raw: URLSearchParams, session: PageQuerySession): URLSearchParams;
  parse(values: URLSearchParams, session: PageQuerySession): Q;
}

export const keysPageQuery: PageQuery<ReturnType<typeof parseKeysPageQuery>> = {
  values: (raw) => lastValues(raw),
  parse: parseKeysPageQuery,
};

export const overviewPageQuery: PageQuery<z.output<typeof overviewQuery>> = {
  // A tenant session reads its own tenant whatever ?tenant= says: its links and query keys do not name another.
  values: (raw, session) => pageValues(raw, session),
  parse: (values) => parseSearchParams(overviewQuery, values),
};

export const gapsPageQuery: PageQuery<GapsQuery> = {
  values: (raw, session) => pageValues(raw, session, ["range", "from", "to", "jobType", "tenant"]),
  parse: (values) => parseGapsQuery(values),
};

export const violationsPageQuery: PageQuery<z.output<typeof violationsQuery>> = {
  // The Violations page checks ?tenant= whoever asks (the read then keeps a tenant session to its own).
  values: (raw) => pageValues(raw, { tenantId: null }, ["tenant", "jobType", "constraint", "from", "to", "cursor", "limit"]),
  parse: (values) => {
    const query = parseSearchParams(violationsQuery, values);
    if (query.cursor) VIOLATION_KEYSET.decode(query.cursor);
    return query;
  },
};

const STATES_KEYS = ["state", "tenant", "jobType", "from", "to", "cursor"];
const statesPageFields = z.object({ state: z.enum(BROWSE_LISTS).default(DEFAULT_BROWSE_LIST) });

/** The States page's URL: the list it shows, and the filter and page of GET /api/v1/effect-states/{state}. */
export interface StatesPageQuery {
  state: BrowseList;
  list: z.output<typeof stateListQuery>;
}

export const statesPageQuery: PageQuery<StatesPageQuery> = {
  // A tenant session reads its own tenant whatever ?tenant= says.
  values: (raw, session) => pageValues(raw, session, STATES_KEYS),
  parse: (values, session) => {
    const { state } = parseSearchParams(statesPageFields, values);
    const list = parseSearchParams(stateListQuery, values);
    // A cursor of another list (key reuse, one tenant's, every tenant's) or none this API made: the page says so.
    const tenant = session.tenantId ?? list.tenant ?? null;
    if (list.cursor) (state === KEY_REUSE ? KEY_REUSE_KEYSET : stateKeysetFor(tenant)).decode(list.cursor);
    return { state, list };
  },
};

const RECONCILIATION_KEYS = ["tenant", "kind", "provider", "jobType", "state", "from", "to", "cursor", "limit", "finding"];

export const reconciliationPageQuery: PageQuery<{ filters: FindingFilters; query: z.output<typeof findingsQuery> }> = {
  values: (raw, session) =>
    new URLSearchParams(findingSearch(Object.fromEntries(pageValues(raw, session, RECONCILIATION_KEYS)) as FindingFilters)),
  parse: (values) => {
    const filters = Object.fromEntries(values) as FindingFilters;
    return { filters, query: parseSearchParams(findingsQuery, values) };
  },
};

export const retentionPageQuery: PageQuery<RetentionQuery> = {
  values: (raw, session) => pageValues(raw, session, ["runs"]),
  parse: (values) => parseRetentionQuery(values),
};

export const auditPageQuery: PageQuery<z.output<typeof auditQuery>> = {
  values: (raw) => pageValues(raw, { tenantId: null }, [...AUDIT_FILTER_KEYS, "cursor", "limit"]),
  parse: (values) => parseSearchParams(auditQuery, values),
};

export const adminPageQuery: PageQuery<AdminPageParams> = {
  values: (raw) => lastValues(raw),
  parse: (values) => parseAdminPageQuery(values),
};

/** Each page that reads a query string, and its one parse (the page renders from the same object). */
export const PAGE_QUERIES: Record<string, PageQuery<unknown>> = {
  "/keys": keysPageQuery,
  "/overview": overviewPageQuery,
  "/gaps": gapsPageQuery,
  "/violations": violationsPageQuery,
  "/states": statesPageQuery,
  "/reconciliation": reconciliationPageQuery,
  "/retention": retentionPageQuery,
  "/audit": auditPageQuery,
  "/admin": adminPageQuery,
};

/** The pages whose ?jobType= must name a job type some worker reported (the page says so in a banner). */
const JOB_TYPE_PAGES = new Set(["/overview"]);

/**
 * What is wrong with a page's query string, as the page itself will show it: INVALID_INPUT (400)
 * for a value the API refuses, NOT_FOUND (404) for a job type no worker ever reported; null when
 * it is fine or the page takes none.
 */
export async function pageQueryError(
  pathname: string,
  search: URLSearchParams,
  session: PageQuerySession,
  db: () => Parameters<typeof isKnownJobType>[0],
): Promise<ApiError | null> {
  const page = pathname.replace(/\/$/, "") || "/";
  const pageQuery = PAGE_QUERIES[page];
  if (!pageQuery) return null;
  try {
    pageQuery.parse(pageQuery.values(search, session), session);
  } catch (error) {
    const e = toApiError(error);
    if (e.code === "INVALID_INPUT") return e;
    throw error;
  }
  const jobType = lastValues(search).get("jobType");
  if (JOB_TYPE_PAGES.has(page) && jobType && !(await isKnownJobType(db(), jobType)))
    return new ApiError("NOT_FOUND", `no worker has reported job type ${JSON.stringify(jobType)}`);
  return null;
}
