import { type KeysPageParams, keysPageParams } from "../console/keys-params";
import { keysSearchUrl } from "../console/keys-types";
import { overviewQuerySchema } from "../console/overview-query";
import { effectSearchQuery } from "./effects-query";
import { ApiError } from "./errors";
import { parseSearchParams } from "./parse";

/**
 * The query strings of the pages that take one, parsed as their API routes parse them. A page
 * renders its own error beside its form; proxy.ts answers the same URL with a 400 status (a page
 * cannot set one itself while it streams), so both come from this one place.
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
  return { params, search };
}

/** The Overview's URL (empty values mean "unset", as its form submits them). */
export function overviewPageQuery(raw: URLSearchParams): URLSearchParams {
  const out = new URLSearchParams();
  for (const [name, value] of raw) if (value !== "") out.set(name, value);
  return out;
}

const PAGE_QUERIES: Record<string, (raw: URLSearchParams) => unknown> = {
  "/keys": (raw) => parseKeysPageQuery(raw, { tenantId: null }),
  "/overview": (raw) => parseSearchParams(overviewQuerySchema, overviewPageQuery(raw)),
};

/** What is wrong with a page's query string (the page shows the same), or null when it is valid or the page takes none. */
export function pageQueryError(pathname: string, search: URLSearchParams): ApiError | null {
  const parse = PAGE_QUERIES[pathname.replace(/\/$/, "") || "/"];
  if (!parse) return null;
  try {
    parse(lastValues(search));
    return null;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}
