import type { ApiOperations } from "../../api/openapi";
import { workerMetricsPath, workersResponse } from "./contract";
import { healthResponse } from "./health-contract";

/** The workers feature's operations of /api/v1, by path template and method (lib/routes/openapi.ts gathers them). */
export const workersOperations: ApiOperations = {
  "/api/v1/workers/{index}/metrics": {
    get: {
      summary: "The n-th configured worker's /metrics text, fetched by the console (viewer; platform tokens)",
      path: workerMetricsPath,
      response: "text",
      errors: [401, 403, 404, 429],
    },
  },
  "/api/v1/workers": {
    get: {
      summary: "Workers' live counters (viewer; proxyPath for platform tokens only)",
      response: workersResponse,
      errors: [401, 429, 500],
    },
  },
  "/api/v1/health": {
    get: {
      summary: "Whether PostgreSQL answers (public: polled before anyone can sign in)",
      response: healthResponse,
      errors: [503],
      public: true,
    },
  },
};
