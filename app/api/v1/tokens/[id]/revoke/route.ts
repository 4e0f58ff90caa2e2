import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parsePathParam } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { adminId } from "@/lib/features/tokens-and-sessions/contract";
import { revokeScopedToken } from "@/lib/features/tokens-and-sessions/token-admin";

export const dynamic = "force-dynamic";

/** POST /api/v1/tokens/{id}/revoke → { token } (admin; audited; its sessions end with it). */
export const POST = withAuth<{ id: string }>("admin", async (_request, { scope, principal, ip, params }) => {
  const id = parsePathParam(adminId, "id", params.id);
  return jsonResponse({ token: await revokeScopedToken({ scope, principal, ip, id }) });
});

export const { GET, PUT, PATCH, DELETE } = otherMethods(["POST"]);
