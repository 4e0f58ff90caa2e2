import type { ApiOperations } from "../../api/openapi";
import { effectDetail, effectKeyPath, effectSearchQuery, effectSearchResponse, releaseResponse, tenantQuery } from "./contract";

/** The keys-and-effects feature's operations of /api/v1, by path template and method (lib/routes/openapi.ts gathers them). */
export const keysAndEffectsOperations: ApiOperations = {
  "/api/v1/effects": {
    get: {
      summary: "Search one tenant's effects by key prefix or fragment, newest first (viewer)",
      query: effectSearchQuery,
      response: effectSearchResponse,
      errors: [400, 401, 403, 429, 503, 504],
    },
  },
  "/api/v1/effects/{key}": {
    get: {
      summary:
        "One effect: status, attempts, outcome, provider key, message ids, the job's steps, violations, its deliveries (viewer; audited)",
      path: effectKeyPath,
      query: tenantQuery,
      response: effectDetail,
      errors: [400, 401, 403, 404, 429, 503, 504],
    },
  },
  "/api/v1/effects/{key}/release": {
    post: {
      summary:
        "Release a stuck in-progress claim whose lease expired, so the next delivery retries it (operator; audited in the same transaction). 409 for a live lease, a completed effect, an at-most-once step (which becomes abandoned on the next delivery instead).",
      path: effectKeyPath,
      query: tenantQuery,
      response: releaseResponse,
      errors: [400, 401, 403, 404, 409, 429, 503, 504],
    },
  },
};
