import { ApiError, jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { tenantQuery } from "@/lib/features/keys-and-effects/contract";
import { effectKeyFromPath } from "@/lib/features/keys-and-effects/effect-key";
import { ReleaseRefusedError, releaseEffect } from "@/lib/features/keys-and-effects/release-effect";

export const dynamic = "force-dynamic";

/**
 * POST /api/v1/effects/{key}/release → ReleaseResponse (operator or admin; CSRF-checked).
 * 409 CONFLICT with the reason for a live lease, a completed effect, an at-most-once step.
 */
export const POST = withAuth("operator", async (request, { principal, scope, ip }) => {
  const key = effectKeyFromPath(request, "release");
  const { tenant: requested } = parseSearchParams(tenantQuery, new URL(request.url));
  const tenant = scope.narrow(requested).oneTenant();
  try {
    return jsonResponse(await releaseEffect({ principal, tenant, key, ip }));
  } catch (error) {
    if (error instanceof ReleaseRefusedError) throw new ApiError(error.code, error.message);
    throw error;
  }
});

const other = otherMethods(["POST"]);
export const { GET, PUT, PATCH, DELETE } = other;
