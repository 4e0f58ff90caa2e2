import { handleErrors, jsonResponse } from "@/lib/api/errors";
import { parseGapsQuery } from "@/lib/console/gaps-query";
import { getGaps } from "@/lib/console/get-gaps";

export const dynamic = "force-dynamic";

/** GET /api/v1/gaps?range=30d|…|1h or ?from=&to=, &jobType=, &tenant= → Gaps (lib/console/gaps-types.ts). */
export const GET = handleErrors(async (request: Request) => {
  return jsonResponse(await getGaps(parseGapsQuery(new URL(request.url))));
});
