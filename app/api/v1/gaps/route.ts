import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { withAuth } from "@/lib/auth/with-auth";
import { parseGapsQuery } from "@/lib/features/retention-and-gaps/gaps-query";
import { getGaps } from "@/lib/features/retention-and-gaps/get-gaps";

export const dynamic = "force-dynamic";

/**
 * GET /api/v1/gaps?range=30d|…|1h or ?from=&to=, &jobType=, &tenant= → Gaps (lib/features/retention-and-gaps/gaps-types.ts).
 * Viewer. A tenant token always gets its own tenant (per-effect gaps from the effects table): the
 * rollups have no tenant dimension, so their fleet-wide numbers are for platform tokens only.
 */
export const GET = withAuth("viewer", async (request, { scope }) => {
  const query = parseGapsQuery(new URL(request.url));
  return jsonResponse(await getGaps(scope, query));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
