import { jsonResponse, otherMethods } from "@/lib/api/errors";
import { parseSearchParams } from "@/lib/api/parse";
import { withAuth } from "@/lib/auth/with-auth";
import { withHttpMetrics } from "@/lib/console/http-metrics";
import { overviewQuery } from "@/lib/features/overview/contract";
import { getOverviewSeries } from "@/lib/features/overview/get-overview-series";

export const dynamic = "force-dynamic";

/**
 * GET /api/v1/overview?window=15m|1h|6h|24h|7d|30d | from=&to= (ISO 8601), &jobType=&tenant=&width=
 * → OverviewResponse (lib/features/overview/overview-types.ts). Viewer; a tenant token sees its own tenant
 * only. An invalid value → 400 INVALID_INPUT naming it; Prometheus failing → 502 METRICS_SOURCE_FAILED.
 */
export const GET = withHttpMetrics(
  "/api/v1/overview",
  withAuth("viewer", async (request, { scope }) => {
    const query = parseSearchParams(overviewQuery, new URL(request.url));
    return jsonResponse(await getOverviewSeries(scope, query));
  }),
);

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
