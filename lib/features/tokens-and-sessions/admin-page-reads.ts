import type { Scope } from "../../auth/scope";
import { getPrisma, type PrismaClient } from "../../db/prisma";
import { ADMIN_PAGE_SIZE, type AdminListsData, type AdminPageParams, adminListSearch } from "./admin-page-types";
import { listLiveSessions } from "./session-admin";
import { listScopedTokens } from "./token-admin";

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
