import { ApiError } from "../../api/errors";
import { type DeclaredRoute, publicRoute, route } from "../../auth/declare-route";
import { checkHealth } from "./check-health";
import { workerMetricsPath, workersResponse } from "./contract";
import { fetchWorkerMetrics, getWorkers } from "./get-workers";
import { healthResponse } from "./health-contract";

/**
 * The n-th WORKER_METRICS_URLS worker's /metrics, fetched by the console, so the Workers panel's
 * links work from another machine (a 127.0.0.1 URL would not). Only configured URLs can be fetched.
 */
export const workerMetricsRoute = route({
  method: "GET",
  path: "/api/v1/workers/{index}/metrics",
  role: "viewer",
  // A worker's counters count every tenant's deliveries.
  platform: "a worker's metrics",
  summary: "The n-th configured worker's /metrics text, fetched by the console (viewer; platform tokens)",
  params: workerMetricsPath,
  // Not a 400: an index that is not a number names no worker, like one past the list.
  paramsFrom: (_request, raw) => {
    const path = workerMetricsPath.safeParse(raw);
    if (!path.success) throw new ApiError("NOT_FOUND", "no such worker");
    return path.data;
  },
  response: "text",
  errors: [401, 403, 404, 429],
  handler: async ({ params: { index } }) => {
    const result = await fetchWorkerMetrics(Number(index));
    if (!result) throw new ApiError("NOT_FOUND", `no worker number ${index} in WORKER_METRICS_URLS`);
    return new Response(result.body, { status: result.status, headers: { "content-type": "text/plain; charset=utf-8" } });
  },
});

const TENANT_WITHHELD =
  "Workers are not shown to a tenant: their addresses are internal and their counters count every tenant's work.";

const UNCONFIGURED_HINT =
  "WORKER_METRICS_URLS is not set: `npm start` sets it to its demo workers' /metrics URLs, or set it to a comma-separated list of your workers' /metrics URLs.";

/**
 * Scraped live on every request: the counters move and a worker may have died since. A malformed
 * WORKER_METRICS_URLS → 500 CONFIG_INVALID naming the entry. A tenant token gets no worker at all,
 * and `withheld` saying why (GET /api/v1/workers/{n}/metrics answers it 403).
 */
export const workersRoute = route({
  method: "GET",
  path: "/api/v1/workers",
  role: "viewer",
  summary: "Workers' live counters (viewer; proxyPath for platform tokens only)",
  response: workersResponse,
  errors: [401, 429, 500],
  handler: async ({ scope }) => {
    if (!scope.platform) return { workers: [], withheld: TENANT_WITHHELD };
    const { configured, workers } = await getWorkers();
    return configured ? { workers } : { workers: [], hint: UNCONFIGURED_HINT };
  },
});

/** 200 when PostgreSQL (and a MySQL effects store, when configured) answers, 503 when not; no version of anything. */
export const healthRoute = publicRoute({
  method: "GET",
  path: "/api/v1/health",
  summary:
    "Whether the console's PostgreSQL and, when EFFECTS_DATABASE_URL is set, the effects store answer (public: polled before anyone can sign in)",
  response: healthResponse,
  errors: [503],
  handler: () => checkHealth(),
});

/** The workers feature's routes of /api/v1 (lib/routes/openapi.ts gathers them into the document). */
export const workersRoutes: DeclaredRoute[] = [workerMetricsRoute, workersRoute, healthRoute];
