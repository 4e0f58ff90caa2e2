import type { Metadata } from "next";
import { AdminLists } from "@/components/admin/admin-lists";
import { AdminOnly } from "@/components/admin/admin-only";
import { TenantFilter } from "@/components/admin/tenant-filter";
import { InvalidQueryAlert } from "@/components/ui/invalid-query-alert";
import { PageHeader } from "@/components/ui/page-header";
import { roleAtLeast } from "@/lib/auth/auth-types";
import { requirePageScope } from "@/lib/auth/page-session";
import { readAdminLists } from "@/lib/features/tokens-and-sessions/admin-page-reads";
import type { AdminPageParams } from "@/lib/features/tokens-and-sessions/admin-page-types";
import { invalidPageQuery, lastValues, parseAdminPageQuery } from "@/lib/routes/page-queries";

export const metadata: Metadata = { title: "Tokens & sessions" };
export const dynamic = "force-dynamic";

const header = (
  <PageHeader
    title="Tokens & sessions"
    description="Machine tokens and who is signed in to the console. Every change here is in the audit log."
  />
);

/**
 * Admins: the tokens and live sessions of their scope (a tenant admin's tenant; a platform admin's
 * every tenant, or ?tenant=), read the way GET /api/v1/tokens and /api/v1/sessions read them, each
 * table a page at a time from its own cursor (?tokensCursor=, ?sessionsCursor=).
 */
export default async function AdminPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { principal, scope } = await requirePageScope("viewer");
  const search = lastValues(await searchParams);
  const admin = roleAtLeast(principal.role, "admin");
  // The tenant filter is a platform admin's; everyone else sees the page's body without it.
  const filterable = admin && scope.platform;
  let params: AdminPageParams;
  try {
    params = parseAdminPageQuery(search);
  } catch (error) {
    // A bad link says so to anyone, beside the filter as typed; no token or session is read for it.
    const invalid = invalidPageQuery(search, error);
    return (
      <>
        {header}
        {filterable ? <TenantFilter tenant={invalid.typed.tenant} /> : null}
        <InvalidQueryAlert invalid={invalid} hint={filterable ? undefined : null} />
      </>
    );
  }
  // After the parse: a good link shows a non-admin no data.
  if (!admin) {
    return (
      <>
        {header}
        <AdminOnly page="Tokens & sessions" role={principal.role} />
      </>
    );
  }
  const lists = await readAdminLists(scope, params);
  return (
    <>
      {header}
      {filterable ? <TenantFilter tenant={params.tenant} /> : null}
      <AdminLists lists={lists} page={params} />
    </>
  );
}
