/**
 * The Tokens & sessions page's URL (/admin?tenant=&tokensCursor=&sessionsCursor=): each table pages
 * on its own, and a link that moves one keeps the other's place. Beside keys-types.ts: values the
 * components use, parsed by lib/routes/page-queries.ts (parseAdminPageQuery).
 */

/** How many tokens, and how many sessions, the page shows at once. */
export const ADMIN_PAGE_SIZE = 100;

export const ADMIN_PAGE_KEYS = ["tenant", "tokensCursor", "sessionsCursor"] as const;

export interface AdminPageParams {
  tenant?: string;
  /** The tokens table's page: the API's nextCursor of the page before; absent, the newest. */
  tokensCursor?: string;
  sessionsCursor?: string;
}

/** The page's URL for these params, unset ones left out. */
export function adminPageHref(params: AdminPageParams): string {
  const search = new URLSearchParams();
  for (const key of ADMIN_PAGE_KEYS) {
    const value = params[key];
    if (value) search.set(key, value);
  }
  const query = search.toString();
  return query ? `/admin?${query}` : "/admin";
}

/**
 * One table's API query (GET /api/v1/tokens or /api/v1/sessions), which the table refreshes with:
 * its tenant (a platform admin's narrowing), its cursor and the page's size.
 */
export function adminListSearch(tenant: string | undefined, cursor: string | undefined): string {
  const search = new URLSearchParams();
  if (tenant) search.set("tenant", tenant);
  if (cursor) search.set("cursor", cursor);
  search.set("limit", String(ADMIN_PAGE_SIZE));
  return search.toString();
}
