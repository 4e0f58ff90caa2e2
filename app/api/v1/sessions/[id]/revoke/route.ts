import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parsePathParam } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { adminId } from "@/lib/features/tokens-and-sessions/contract";
import { revokeScopedSession } from "@/lib/features/tokens-and-sessions/session-admin";

export const dynamic = "force-dynamic";

/** POST /api/v1/sessions/{id}/revoke → { id, revoked } (admin; audited): the session's next request is refused. */
export const POST = withAuth<{ id: string }>("admin", async (_request, { scope, principal, ip, params }) => {
  const id = parsePathParam(adminId, "id", params.id);
  return jsonResponse(await revokeScopedSession({ scope, principal, ip, id }));
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
