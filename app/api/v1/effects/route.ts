import { effectSearchQuery } from "@/lib/api/effects-query";
import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { audit } from "@/lib/auth/audit";
import { requireTenant, withAuth } from "@/lib/auth/with-auth";
import { searchEffects } from "@/lib/console/search-effects";

export const dynamic = "force-dynamic";

/** GET /api/v1/effects?q=&status=&jobType=&from=&to=&cursor=&limit= → EffectSearchResponse (viewer; one tenant). */
export const GET = withAuth("viewer", async (request, { principal, ip }) => {
  const query = parseSearchParams(effectSearchQuery, new URL(request.url));
  const tenant = requireTenant(principal, query.tenant);
  const result = await searchEffects({ ...query, tenant });
  await audit({
    principal,
    action: "effect.search",
    tenantId: tenant,
    target: query.q ?? null,
    result: "ok",
    detail: { results: result.effects.length, status: query.status ?? null, jobType: query.jobType ?? null },
    ip,
  });
  return jsonResponse(result);
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
