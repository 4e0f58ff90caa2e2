import type { ApiOperations } from "../../api/openapi";
import { violationListResponse, violationsQuery } from "./contract";

/** The violations feature's operations of /api/v1, by path template and method (lib/routes/openapi.ts gathers them). */
export const violationsOperations: ApiOperations = {
  "/api/v1/violations": {
    get: {
      summary:
        "Every uncaught unique violation, one per affected key and time, newest first (viewer; a tenant token sees its own tenant, a platform token every tenant or ?tenant=)",
      query: violationsQuery,
      response: violationListResponse,
      errors: [400, 401, 429, 503, 504],
    },
  },
};
