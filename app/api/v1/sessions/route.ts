import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { listLiveSessions } from "@/lib/auth/session-admin";
import { withAuth } from "@/lib/auth/with-auth";
import { adminListQuery } from "@/lib/contract/admin";

export const dynamic = "force-dynamic";

/** GET /api/v1/sessions?tenant= → SessionsResponse: live console sessions (admin; a tenant admin sees its tenant's). */
export const GET = withAuth("admin", async (request, { scope }) => {
  const { tenant, cursor, limit } = parseSearchParams(adminListQuery, new URL(request.url));
  return jsonResponse(await listLiveSessions(scope.narrow(tenant), { cursor, limit }));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
