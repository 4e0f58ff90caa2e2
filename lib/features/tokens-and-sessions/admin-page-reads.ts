import type { Scope } from "../../auth/scope";
import { getPrisma, type PrismaClient } from "../../db/prisma";
import { ADMIN_PAGE_SIZE, type AdminPageParams, adminListSearch } from "./admin-page-types";
import type { SessionsResponse, TokensResponse } from "./contract";
import { listLiveSessions } from "./session-admin";
import { listScopedTokens } from "./token-admin";

/** What the page shows (components/admin/admin-lists.tsx): each table's page and the API query it refreshes with. */
export interface AdminListsData {
  tokens: TokensResponse;
  sessions: SessionsResponse;
  tokensSearch: string;
  sessionsSearch: string;
  /** The tenant tokens are made for (a tenant admin's own; a platform admin's narrowing, or null). */
  tenant: string | null;
  platform: boolean;
}

/**
 * The page's reads, as GET /api/v1/tokens and /api/v1/sessions read them: the scope narrowed to the
 * URL's tenant, each table from its own cursor, a page of ADMIN_PAGE_SIZE.
 */
export async function readAdminLists(
  scope: Scope,
  params: AdminPageParams,
  db: Pick<PrismaClient, "apiToken" | "consoleSession"> = getPrisma(),
): Promise<AdminListsData> {
  const narrowed = scope.narrow(params.tenant);
  // A tenant admin's API reads its own tenant whatever it names: its tables ask for none.
  const apiTenant = scope.platform ? params.tenant : undefined;
  const [tokens, sessions] = await Promise.all([
    listScopedTokens(narrowed, { cursor: params.tokensCursor, limit: ADMIN_PAGE_SIZE }, db),
    listLiveSessions(narrowed, { cursor: params.sessionsCursor, limit: ADMIN_PAGE_SIZE }, db),
  ]);
  return {
    tokens,
    sessions,
    tokensSearch: adminListSearch(apiTenant, params.tokensCursor),
    sessionsSearch: adminListSearch(apiTenant, params.sessionsCursor),
    tenant: narrowed.tenant,
    platform: scope.platform,
  };
}
