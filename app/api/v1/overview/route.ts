import { z } from "zod";
import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { getOverview } from "@/lib/console/get-overview";
import { DEFAULT_OVERVIEW_WINDOW, OVERVIEW_WINDOWS } from "@/lib/console/overview-types";

export const dynamic = "force-dynamic";

const query = z.object({ window: z.enum(OVERVIEW_WINDOWS).default(DEFAULT_OVERVIEW_WINDOW) });

/** GET /api/v1/overview?window=1h|24h|7d → Overview (lib/console/overview-types.ts). Viewer; all tenants (aggregates, no keys). */
export const GET = withAuth("viewer", async (request) => {
  const { window } = parseSearchParams(query, new URL(request.url));
  return jsonResponse(await getOverview({ window }));
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
