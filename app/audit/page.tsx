import type { Metadata } from "next";
import { AdminOnly } from "@/components/admin/admin-only";
import { AuditExportLinks } from "@/components/audit/audit-export-links";
import { AuditFilters } from "@/components/audit/audit-filters";
import { AuditIntegrityBadge } from "@/components/audit/audit-integrity-badge";
import { AuditTable } from "@/components/audit/audit-table";
import { InvalidQueryAlert } from "@/components/ui/invalid-query-alert";
import { PageHeader } from "@/components/ui/page-header";
import { parseSearchParams } from "@/lib/api/parse";
import { roleAtLeast } from "@/lib/auth/auth-types";
import { requirePageScope } from "@/lib/auth/page-session";
import { auditIntegrity } from "@/lib/features/audit/audit-integrity";
import { AUDIT_FILTER_KEYS, type AuditPageFilters, typedAuditFilters } from "@/lib/features/audit/audit-page-types";
import { auditQuery } from "@/lib/features/audit/contract";
import { listAudit } from "@/lib/features/audit/list-audit";
import { invalidPageQuery } from "@/lib/routes/page-queries";

export const metadata: Metadata = { title: "Audit log" };
export const dynamic = "force-dynamic";

const header = (
  <PageHeader
    title="Audit log"
    description="Every key read and every write, who made it and from where, newest first. Export it for your SIEM."
  />
);

/** The audit log for admins, filtered by the URL, read the way GET /api/v1/audit reads it. */
export default async function AuditPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { principal, scope } = await requirePageScope("viewer");
  const raw = await searchParams;
  const search = new URLSearchParams();
  for (const k of [...AUDIT_FILTER_KEYS, "cursor", "limit"]) {
    const v = raw[k];
    const value = Array.isArray(v) ? v.at(-1) : v;
    if (value) search.set(k, value);
  }
  const admin = roleAtLeast(principal.role, "admin");
  // A bad link says so to anyone; an admin gets the filters as typed above the error, to correct
  // them there. No log is read for a link that names no list.
  const invalid = (error: unknown) => {
    const found = invalidPageQuery(search, error);
    return (
      <>
        {header}
        {admin ? <AuditFilters filters={typedAuditFilters(found.typed)} platform={scope.platform} /> : null}
        <InvalidQueryAlert invalid={found} hint={admin ? undefined : null} />
      </>
    );
  };
  let query: ReturnType<typeof auditQuery.parse>;
  try {
    query = parseSearchParams(auditQuery, search);
  } catch (error) {
    return invalid(error);
  }
  // After the parse: a bad link says so to anyone; a good one shows a non-admin no data.
  if (!admin) {
    return (
      <>
        {header}
        <AdminOnly page="The audit log" role={principal.role} />
      </>
    );
  }
  const filters: AuditPageFilters = {
    tenant: scope.platform ? (query.tenant ?? null) : null,
    actor: query.actor ?? null,
    action: query.action ?? null,
    target: query.target ?? null,
    from: search.get("from"),
    to: search.get("to"),
  };
  let list: Awaited<ReturnType<typeof listAudit>>;
  try {
    list = await listAudit(scope, { ...query, limit: query.limit ?? 100 });
  } catch (error) {
    // A bad cursor is the link's fault (invalid() throws anything else on, to the error page).
    return invalid(error);
  }
  const integrity = await auditIntegrity(scope);
  return (
    <>
      {header}
      <AuditFilters filters={filters} platform={scope.platform} />
      <AuditIntegrityBadge integrity={integrity} />
      <AuditExportLinks filters={filters} />
      <AuditTable list={list} filters={filters} />
    </>
  );
}
