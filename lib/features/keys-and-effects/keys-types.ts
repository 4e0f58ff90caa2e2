import type { EffectStatus } from "./effects-types";

/** The Keys page's parameters, after lib/features/keys-and-effects/keys-params.ts; `tenant` resolved for tenant tokens. */
export interface KeysViewParams {
  tenant?: string;
  q?: string;
  status?: EffectStatus;
  jobType?: string;
  key?: string;
  /** The results' page: the nextCursor of the page before (absent: the newest keys). */
  cursor?: string;
}

/** How many keys a search page shows. */
export const KEYS_PAGE_SIZE = 50;

/** A query string of the set values, in the order given. */
export function keysQueryString(params: Record<string, string | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value) search.set(name, value);
  return search.toString();
}

/**
 * The API URL of the page's search, which is also its TanStack Query key: the server prefetches
 * under it (app/keys/page.tsx) and the client reads the same entry (components/keys/keys-view.tsx).
 * A platform token names the tenant; a tenant token's own tenant is implied.
 */
export function keysSearchUrl(params: KeysViewParams, platform: boolean): string {
  return `/api/v1/effects?${keysQueryString({
    tenant: platform ? params.tenant : undefined,
    q: params.q,
    status: params.status,
    jobType: params.jobType,
    cursor: params.cursor,
    limit: String(KEYS_PAGE_SIZE),
  })}`;
}

/** The API URL of a key's detail (its query key too). */
export function keyDetailUrl(tenant: string, key: string, platform: boolean): string {
  return `/api/v1/effects/${encodeURIComponent(key)}${platform ? `?${keysQueryString({ tenant })}` : ""}`;
}

/** The first element of every key search's query key: a write that changes effects invalidates them all. */
export const KEYS_SEARCH_QUERY_ROOT = "effects";
export const keysSearchQueryKey = (url: string) => [KEYS_SEARCH_QUERY_ROOT, url] as const;
export const keyDetailQueryKey = (url: string) => ["effect", url] as const;

/** The Keys page showing one key of a tenant: where the Overview, Gaps and Violations link a key. */
// The key is its own search too: the results list that one claim beside its detail, not the
// tenant's newest 50.
export const keyHref = (tenant: string, key: string) => `/keys?${keysQueryString({ tenant, q: key, key })}`;
/** The Keys page filtered to one job type. */
export const jobTypeHref = (jobType: string) => `/keys?${keysQueryString({ jobType })}`;
