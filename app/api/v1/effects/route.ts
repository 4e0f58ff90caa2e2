import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { searchEffectsAudited } from "@/lib/features/keys-and-effects/audited-reads";
import { effectSearchQuery } from "@/lib/features/keys-and-effects/contract";

export const dynamic = "force-dynamic";

/** GET /api/v1/effects?q=&status=&jobType=&from=&to=&cursor=&limit= → EffectSearchResponse (viewer; one tenant, or every tenant for a platform token naming none). */
export const GET = withAuth("viewer", async (request, { principal, scope, ip }) => {
  const query = parseSearchParams(effectSearchQuery, new URL(request.url));
  return jsonResponse(await searchEffectsAudited({ principal, scope, search: query, ip }));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
