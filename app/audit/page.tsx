import type { Metadata } from "next";
import { AuditExportLinks } from "@/components/audit/audit-export-links";
import { AuditFilters } from "@/components/audit/audit-filters";
import { AuditIntegrityBadge } from "@/components/audit/audit-integrity-badge";
import { AuditTable } from "@/components/audit/audit-table";
import { InvalidQueryAlert } from "@/components/ui/invalid-query-alert";
import { roleAtLeast } from "@/lib/auth/auth-types";
import { auditIntegrity } from "@/lib/features/audit/audit-integrity";
import { typedAuditFilters } from "@/lib/features/audit/audit-page-types";
import { listAudit } from "@/lib/features/audit/list-audit";
import { auditPageQuery } from "@/lib/routes/page-queries";
import { declarePage } from "../_shared/declare-page";

export const metadata: Metadata = { title: "Audit log" };
export const dynamic = "force-dynamic";

/** The audit log for admins, filtered by the URL, read the way GET /api/v1/audit reads it. */
export default declarePage({
  title: "Audit log",
  description: "Every key read and every write, who made it and from where, newest first. Export it for your SIEM.",
  query: auditPageQuery,
  // A bad link says so to anyone; an admin gets the filters as typed above the error, to correct them there.
  invalid: ({ principal, scope, invalid }) =>
    roleAtLeast(principal.role, "admin") ? (
      <>
        <AuditFilters filters={typedAuditFilters(invalid.typed)} platform={scope.platform} />
        <InvalidQueryAlert invalid={invalid} />
      </>
    ) : (
      <InvalidQueryAlert invalid={invalid} hint={null} />
    ),
  dataRole: { role: "admin", page: "The audit log" },
  load: async ({ scope, query }) => ({
    list: await listAudit(scope, { ...query, limit: query.limit ?? 100 }),
    integrity: await auditIntegrity(scope),
  }),
  render: ({ scope, query, values, data }) => {
    const { actor = null, action = null, target = null } = query;
    const tenant = scope.platform ? (query.tenant ?? null) : null;
    const filters = { tenant, actor, action, target, from: values.get("from"), to: values.get("to") };
    return (
      <>
        <AuditFilters filters={filters} platform={scope.platform} />
        <AuditIntegrityBadge integrity={data.integrity} />
        <AuditExportLinks filters={filters} />
        <AuditTable list={data.list} filters={filters} />
      </>
    );
  },
});
