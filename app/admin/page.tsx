import type { Metadata } from "next";
import { AdminLists } from "@/components/admin/admin-lists";
import { TenantFilter } from "@/components/admin/tenant-filter";
import { InvalidQueryAlert } from "@/components/ui/invalid-query-alert";
import { type Principal, roleAtLeast } from "@/lib/auth/auth-types";
import type { Scope } from "@/lib/auth/scope";
import { readAdminLists } from "@/lib/features/tokens-and-sessions/admin-page-reads";
import { adminPageQuery } from "@/lib/routes/page-queries";
import { declarePage } from "../_shared/declare-page";

export const metadata: Metadata = { title: "Tokens & sessions" };
export const dynamic = "force-dynamic";

/** The tenant filter is a platform admin's; everyone else sees the page's body without it. */
const filterable = (principal: Principal, scope: Scope) => roleAtLeast(principal.role, "admin") && scope.platform;

/**
 * Admins: the tokens and live sessions of their scope (a tenant admin's tenant; a platform admin's
 * every tenant, or ?tenant=), read the way GET /api/v1/tokens and /api/v1/sessions read them, each
 * table a page at a time from its own cursor (?tokensCursor=, ?sessionsCursor=).
 */
export default declarePage({
  title: "Tokens & sessions",
  description: "Machine tokens and who is signed in to the console. Every change here is in the audit log.",
  query: adminPageQuery,
  invalid: ({ principal, scope, invalid }) => (
    <>
      {filterable(principal, scope) ? <TenantFilter tenant={invalid.typed.tenant} /> : null}
      <InvalidQueryAlert invalid={invalid} hint={filterable(principal, scope) ? undefined : null} />
    </>
  ),
  dataRole: { role: "admin", page: "Tokens & sessions" },
  load: ({ scope, query }) => readAdminLists(scope, query),
  render: ({ principal, scope, query, data }) => (
    <>
      {filterable(principal, scope) ? <TenantFilter tenant={query.tenant} /> : null}
      <AdminLists lists={data} page={query} />
    </>
  ),
});
