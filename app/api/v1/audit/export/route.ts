import { otherMethods } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { exportAuditLog } from "@/lib/features/audit/audited-export";
import { auditExportQuery } from "@/lib/features/audit/contract";

export const dynamic = "force-dynamic";

const CONTENT_TYPE = { csv: "text/csv; charset=utf-8", ndjson: "application/x-ndjson; charset=utf-8" } as const;

/** GET /api/v1/audit/export?format=csv|ndjson&actor=&action=&target=&tenant=&from=&to= → the filtered log, streamed (admin; audited). */
export const GET = withAuth("admin", async (request, { principal, scope, ip }) => {
  const { format, ...filter } = parseSearchParams(auditExportQuery, new URL(request.url));
  const { stream, filename } = await exportAuditLog({ principal, scope, filter, format, ip });
  return new Response(stream, {
    headers: {
      "content-type": CONTENT_TYPE[format],
      "content-disposition": `attachment; filename="${filename}"`,
      "x-content-type-options": "nosniff",
    },
  });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
