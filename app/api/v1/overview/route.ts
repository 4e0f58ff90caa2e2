import { z } from "zod";
import { handleErrors, jsonResponse } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { getOverview } from "@/lib/console/get-overview";
import { DEFAULT_OVERVIEW_WINDOW, OVERVIEW_WINDOWS } from "@/lib/console/overview-types";

export const dynamic = "force-dynamic";

const query = z.object({ window: z.enum(OVERVIEW_WINDOWS).default(DEFAULT_OVERVIEW_WINDOW) });

/** GET /api/v1/overview?window=1h|24h|7d → Overview (lib/console/overview-types.ts). */
export const GET = handleErrors(async (request: Request) => {
  const { window } = parseSearchParams(query, new URL(request.url));
  return jsonResponse(await getOverview({ window }));
});
