import { withAuth } from "@/lib/auth/with-auth";
import { consoleMetricsText } from "@/lib/console/http-metrics";

export const dynamic = "force-dynamic";

/** GET /api/metrics: the console's own metrics (HTTP request durations), Prometheus text format. */
export const GET = withAuth("viewer", async () => {
  const { body, contentType } = await consoleMetricsText();
  return new Response(body, { headers: { "content-type": contentType } });
});
