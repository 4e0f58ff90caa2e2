import type { Metadata } from "next";
import { AdminOnly } from "@/components/admin/admin-only";
import { SessionsTable } from "@/components/admin/sessions-table";
import { TenantFilter } from "@/components/admin/tenant-filter";
import { TokensTable } from "@/components/admin/tokens-table";
import { InvalidQueryAlert } from "@/components/ui/invalid-query-alert";
import { PageHeader } from "@/components/ui/page-header";
import { invalidPageQuery } from "@/lib/api/page-queries";
import { parseSearchParams } from "@/lib/api/parse";
import { roleAtLeast } from "@/lib/auth/auth-types";
import { requirePageScope } from "@/lib/auth/page-session";
import { listLiveSessions } from "@/lib/auth/session-admin";
import { listScopedTokens } from "@/lib/auth/token-admin";
import { ADMIN_PAGE_MAX, adminListQuery } from "@/lib/contract/admin";

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
 * every tenant, or ?tenant=), read the way GET /api/v1/tokens and /api/v1/sessions read them.
 */
export default async function AdminPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { principal, scope } = await requirePageScope("viewer");
  const raw = (await searchParams).tenant;
  const requested = Array.isArray(raw) ? raw.at(-1) : raw;
  const search = new URLSearchParams(requested ? { tenant: requested } : {});
  const admin = roleAtLeast(principal.role, "admin");
  // The tenant filter is a platform admin's; everyone else sees the page's body without it.
  const filterable = admin && scope.platform;
  let tenant: string | undefined;
  try {
    tenant = parseSearchParams(adminListQuery, search).tenant;
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
  const narrowed = scope.narrow(tenant);
  const tablesSearch = scope.platform && tenant ? new URLSearchParams({ tenant }).toString() : "";
  const page = { limit: ADMIN_PAGE_MAX };
  const [tokens, sessions] = await Promise.all([listScopedTokens(narrowed, page), listLiveSessions(narrowed, page)]);
  return (
    <>
      {header}
      {filterable ? <TenantFilter tenant={tenant} /> : null}
      <TokensTable initial={tokens} search={tablesSearch} platform={scope.platform} tenant={narrowed.tenant} />
      <SessionsTable initial={sessions} search={tablesSearch} />
    </>
  );
}
