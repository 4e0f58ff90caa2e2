import { otherMethods } from "@/lib/api/errors";
import { withAuth } from "@/lib/auth/with-auth";
import { consoleMetricsText } from "@/lib/console/http-metrics";

export const dynamic = "force-dynamic";

/**
 * GET /api/metrics: the console's own metrics (HTTP request durations), Prometheus text format.
 * Platform tokens only (403 for a tenant token): they count every tenant's requests.
 */
export const GET = withAuth("viewer", async (_request, { scope }) => {
  scope.requirePlatform("the console's metrics");
  const { body, contentType } = await consoleMetricsText();
  return new Response(body, { headers: { "content-type": contentType } });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
