import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseJsonBody, parseSearchParams } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { adminListQuery, createTokenBody } from "@/lib/features/tokens-and-sessions/contract";
import { createScopedToken, listScopedTokens } from "@/lib/features/tokens-and-sessions/token-admin";

export const dynamic = "force-dynamic";

/** GET /api/v1/tokens?tenant= → TokensResponse (admin; a tenant admin sees its tenant's tokens). */
export const GET = withAuth("admin", async (request, { scope }) => {
  const { tenant, cursor, limit } = parseSearchParams(adminListQuery, new URL(request.url));
  return jsonResponse(await listScopedTokens(scope.narrow(tenant), { cursor, limit }));
});

/** POST /api/v1/tokens → 201 CreatedTokenResponse: the secret, shown this once (admin; audited). */
export const POST = withAuth("admin", async (request, { scope, principal, ip }) => {
  const body = await parseJsonBody(createTokenBody, request);
  const created = await createScopedToken({
    scope,
    principal,
    ip,
    request: { name: body.name, role: body.role, tenantId: body.tenant, expiresAt: body.expiresAt },
  });
  return jsonResponse(created, { status: 201 });
});

export const { PUT, PATCH, DELETE } = otherMethods(["GET", "POST"]);
