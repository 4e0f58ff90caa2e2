import { type DeclaredRoute, route } from "../../auth/declare-route";
import { auditIntegrity } from "./audit-integrity";
import { exportAuditLog } from "./audited-export";
import { auditExportQuery, auditIntegrityView, auditQuery, auditResponse } from "./contract";
import { listAudit } from "./list-audit";

export const listAuditRoute = route({
  method: "GET",
  path: "/api/v1/audit",
  role: "admin",
  summary: "The audit log, newest first (admin; a tenant admin sees its tenant's rows)",
  query: auditQuery,
  response: auditResponse,
  errors: [400, 401, 403, 429, 503, 504],
  handler: ({ scope, query }) => listAudit(scope, query),
});

const CONTENT_TYPE = { csv: "text/csv; charset=utf-8", ndjson: "application/x-ndjson; charset=utf-8" } as const;

export const exportAuditRoute = route({
  method: "GET",
  path: "/api/v1/audit/export",
  role: "admin",
  summary:
    "The filtered audit log as a file, streamed newest first: CSV (formula-leading cells neutralised) or NDJSON (admin; the export is itself audited)",
  query: auditExportQuery,
  response: "text",
  text: {
    mediaTypes: ["text/csv", "application/x-ndjson"],
    description: "The rows, one per line, up to the newest that existed when the export began",
  },
  errors: [400, 401, 403, 429, 503, 504],
  handler: async ({ principal, scope, query: { format, ...filter }, ip }) => {
    const { stream, filename } = await exportAuditLog({ principal, scope, filter, format, ip });
    return new Response(stream, {
      headers: {
        "content-type": CONTENT_TYPE[format],
        "content-disposition": `attachment; filename="${filename}"`,
        "x-content-type-options": "nosniff",
      },
    });
  },
});

export const auditIntegrityRoute = route({
  method: "GET",
  path: "/api/v1/audit/integrity",
  role: "admin",
  summary:
    "Whether the audit log's hash chain holds: checked in slices from where the last check stopped, fully again hourly (admin; where it broke: platform admins)",
  response: auditIntegrityView,
  errors: [401, 403, 429, 503, 504],
  handler: ({ scope }) => auditIntegrity(scope),
});

/** The audit feature's routes of /api/v1 (lib/routes/openapi.ts gathers them into the document). */
export const auditRoutes: DeclaredRoute[] = [listAuditRoute, exportAuditRoute, auditIntegrityRoute];
