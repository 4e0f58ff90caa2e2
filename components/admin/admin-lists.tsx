import type { AdminListsData } from "@/lib/features/tokens-and-sessions/admin-page-reads";
import type { AdminPageParams } from "@/lib/features/tokens-and-sessions/admin-page-types";
import { SessionsTable } from "./sessions-table";
import { TokensTable } from "./tokens-table";

/** The Tokens & sessions page's body (app/admin/page.tsx): both tables, each on its own page of the URL's. */
export function AdminLists({ lists, page }: { lists: AdminListsData; page: AdminPageParams }) {
  return (
    <>
      <TokensTable
        initial={lists.tokens}
        search={lists.tokensSearch}
        platform={lists.platform}
        tenant={lists.tenant}
        page={page}
      />
      <SessionsTable initial={lists.sessions} search={lists.sessionsSearch} page={page} />
    </>
  );
}
