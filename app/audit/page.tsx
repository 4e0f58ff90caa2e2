import type { Metadata } from "next";
import { AdminOnly } from "@/components/admin/admin-only";
import { AuditExportLinks } from "@/components/audit/audit-export-links";
import { AuditFilters } from "@/components/audit/audit-filters";
import { AuditIntegrityBadge } from "@/components/audit/audit-integrity-badge";
import { AuditTable } from "@/components/audit/audit-table";
import { ErrorState } from "@/components/ui/error-state";
import { PageHeader } from "@/components/ui/page-header";
import { toApiError } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { auditIntegrity } from "@/lib/auth/audit-integrity";
import { roleAtLeast } from "@/lib/auth/auth-types";
import { requirePageScope } from "@/lib/auth/page-session";
import { AUDIT_FILTER_KEYS, type AuditPageFilters } from "@/lib/console/audit-page-types";
import { listAudit } from "@/lib/console/list-audit";
import { auditQuery } from "@/lib/contract/audit";

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
  const invalid = (error: unknown) => {
    const e = toApiError(error);
    return (
      <>
        {header}
        <ErrorState title="This link has an invalid filter" message={e.message} code={e.code} />
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
  if (!roleAtLeast(principal.role, "admin")) {
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
    if (toApiError(error).code !== "INVALID_INPUT") throw error;
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
