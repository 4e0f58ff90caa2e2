import { ApiError, otherMethods } from "@/lib/api/errors";
import { withAuth } from "@/lib/auth/with-auth";
import { workerMetricsPath } from "@/lib/features/workers/contract";
import { fetchWorkerMetrics } from "@/lib/features/workers/get-workers";

export const dynamic = "force-dynamic";

/**
 * GET /api/v1/workers/<n>/metrics: the n-th WORKER_METRICS_URLS worker's /metrics, fetched by the
 * console, so the Workers panel's links work from another machine (a 127.0.0.1 URL would not).
 * Only configured URLs can be fetched. Platform tokens only (403 for a tenant token): a worker's
 * counters count every tenant's deliveries.
 */
export const GET = withAuth<{ index: string }>("viewer", async (_request, { params, scope }) => {
  scope.requirePlatform("a worker's metrics");
  const path = workerMetricsPath.safeParse(params);
  if (!path.success) throw new ApiError("NOT_FOUND", "no such worker");
  const { index } = path.data;
  const result = await fetchWorkerMetrics(Number(index));
  if (!result) throw new ApiError("NOT_FOUND", `no worker number ${index} in WORKER_METRICS_URLS`);
  return new Response(result.body, { status: result.status, headers: { "content-type": "text/plain; charset=utf-8" } });
});

export const { POST, PUT, PATCH, DELETE } = otherMethods(["GET"]);
