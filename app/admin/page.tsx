import type { Metadata } from "next";
import { AdminOnly } from "@/components/admin/admin-only";
import { SessionsTable } from "@/components/admin/sessions-table";
import { TokensTable } from "@/components/admin/tokens-table";
import { ErrorState } from "@/components/ui/error-state";
import { PageHeader } from "@/components/ui/page-header";
import { toApiError } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { roleAtLeast } from "@/lib/auth/auth-types";
import { requirePageScope } from "@/lib/auth/page-session";
import { listLiveSessions } from "@/lib/auth/session-admin";
import { listScopedTokens } from "@/lib/auth/token-admin";
import { adminListQuery } from "@/lib/contract/admin";

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
  let tenant: string | undefined;
  try {
    tenant = parseSearchParams(adminListQuery, new URLSearchParams(requested ? { tenant: requested } : {})).tenant;
  } catch (error) {
    const e = toApiError(error);
    return (
      <>
        {header}
        <ErrorState title="This link has an invalid filter" message={e.message} code={e.code} />
      </>
    );
  }
  // After the parse: a bad link says so to anyone; a good one shows a non-admin no data.
  if (!roleAtLeast(principal.role, "admin")) {
    return (
      <>
        {header}
        <AdminOnly page="Tokens & sessions" role={principal.role} />
      </>
    );
  }
  const narrowed = scope.narrow(tenant);
  const search = scope.platform && tenant ? new URLSearchParams({ tenant }).toString() : "";
  const [tokens, sessions] = await Promise.all([listScopedTokens(narrowed), listLiveSessions(narrowed)]);
  return (
    <>
      {header}
      {scope.platform ? (
        <form method="get" action="/admin" className="filter-form">
          <label>
            Tenant <input name="tenant" defaultValue={tenant ?? ""} placeholder="all" size={12} />
          </label>
          <button type="submit" className="button button-quiet">
            Apply
          </button>
        </form>
      ) : null}
      <TokensTable initial={{ tokens }} search={search} platform={scope.platform} tenant={narrowed.tenant} />
      <SessionsTable initial={{ sessions }} search={search} />
    </>
  );
}
