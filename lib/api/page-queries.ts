import { type KeysPageParams, keysPageParams } from "../console/keys-params";
import { keysSearchUrl } from "../console/keys-types";
import { effectSearchQuery } from "../contract/effects";
import { parseSearchParams } from "./parse";

/** The Keys page's query string, parsed as its API route parses it: an invalid one shows the API's 400 text beside the form. */

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
