import type { ApiOperations } from "../../api/openapi";
import { overviewQuery, overviewResponse } from "./contract";

/** The overview feature's operations of /api/v1, by path template and method (lib/routes/openapi.ts gathers them). */
export const overviewOperations: ApiOperations = {
  "/api/v1/overview": {
    get: {
      summary:
        "The Overview's series: suppressions, deliveries, violations, claim rate and latency, tenants, stuck claims, alerts (viewer; a tenant token sees its own tenant)",
      query: overviewQuery,
      response: overviewResponse,
      errors: [400, 401, 429, 502, 503, 504],
    },
  },
};
