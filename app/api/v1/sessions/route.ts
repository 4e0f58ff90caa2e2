import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { adminListQuery } from "@/lib/features/tokens-and-sessions/contract";
import { listLiveSessions } from "@/lib/features/tokens-and-sessions/session-admin";

export const dynamic = "force-dynamic";

/** GET /api/v1/sessions?tenant= → SessionsResponse: live console sessions (admin; a tenant admin sees its tenant's). */
export const GET = withAuth("admin", async (request, { scope }) => {
  const { tenant, cursor, limit } = parseSearchParams(adminListQuery, new URL(request.url));
  return jsonResponse(await listLiveSessions(scope.narrow(tenant), { cursor, limit }));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
