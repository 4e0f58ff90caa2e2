import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { withAuth } from "@/lib/auth/with-auth";
import { auditIntegrity } from "@/lib/features/audit/audit-integrity";

export const dynamic = "force-dynamic";

/** GET /api/v1/audit/integrity → AuditIntegrityView: whether the audit log's hash chain holds (admin). */
export const GET = withAuth("admin", async (_request, { scope }) => jsonResponse(await auditIntegrity(scope)));

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
