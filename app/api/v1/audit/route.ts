import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { auditQuery } from "@/lib/features/audit/contract";
import { listAudit } from "@/lib/features/audit/list-audit";

export const dynamic = "force-dynamic";

/** GET /api/v1/audit?from=&to=&cursor=&limit= → AuditResponse (admin; a tenant admin sees its tenant's rows). */
export const GET = withAuth("admin", async (request, { scope }) => {
  const query = parseSearchParams(auditQuery, new URL(request.url));
  return jsonResponse(await listAudit(scope, query));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
