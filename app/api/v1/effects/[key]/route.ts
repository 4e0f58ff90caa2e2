import { ApiError, jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { readEffectAudited } from "@/lib/features/keys-and-effects/audited-reads";
import { tenantQuery } from "@/lib/features/keys-and-effects/contract";
import { effectKeyFromPath } from "@/lib/features/keys-and-effects/effect-key";

export const dynamic = "force-dynamic";

/**
 * GET /api/v1/effects/{key} → EffectDetail (viewer). The tenant comes from the token (a platform
 * token adds ?tenant=). Another tenant's key answers exactly like a missing one: same query, same
 * audit write, same 404 body.
 */
export const GET = withAuth("viewer", async (request, { principal, scope, ip }) => {
  const key = effectKeyFromPath(request);
  const { tenant: requested } = parseSearchParams(tenantQuery, new URL(request.url));
  const detail = await readEffectAudited({ principal, scope, tenant: requested, key, ip });
  if (!detail) throw new ApiError("NOT_FOUND", "no effect with this key");
  return jsonResponse(detail);
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
