import type { ApiOperations } from "../../api/openapi";
import {
  bulkAcknowledgeBody,
  bulkAcknowledgeDryRunResponse,
  bulkActionResponse,
  bulkDryRunResponse,
  bulkIdPath,
  bulkItemsQuery,
  bulkItemsResponse,
  bulkReleaseBody,
} from "./contract";

/** The bulk-actions feature's operations of /api/v1, by path template and method (lib/routes/openapi.ts gathers them). */
export const bulkActionsOperations: ApiOperations = {
  "/api/v1/bulk/release": {
    post: {
      summary:
        "Release every stuck claim (in progress, lease expired, not at-most-once) of one tenant matching the Keys page's filter. dryRun: 200, how many and a sample. Else 202: a background action, capped at BULK_ACTION_MAX_ITEMS (409 past it), each key released by the library and audited (operator)",
      body: bulkReleaseBody,
      response: bulkDryRunResponse,
      alsoAnswers: [{ status: 202, response: bulkActionResponse, description: "Started" }],
      errors: [400, 401, 403, 409, 413, 429, 503, 504],
    },
  },
  "/api/v1/bulk/acknowledge-findings": {
    post: {
      summary:
        "Acknowledge, with one note, every open reconciliation finding matching the Reconciliation page's filter (a platform token without a tenant: every tenant's). dryRun: 200, how many and a sample. Else 202: a background action, capped at BULK_ACTION_MAX_ITEMS (409 past it), each finding acknowledged and audited (operator)",
      body: bulkAcknowledgeBody,
      response: bulkAcknowledgeDryRunResponse,
      alsoAnswers: [{ status: 202, response: bulkActionResponse, description: "Started" }],
      errors: [400, 401, 403, 409, 413, 429, 503, 504],
    },
  },
  "/api/v1/bulk/{id}": {
    get: {
      summary: "A bulk action's state and progress (viewer; a tenant token sees its own tenant's)",
      path: bulkIdPath,
      response: bulkActionResponse,
      errors: [400, 401, 404, 429, 503, 504],
    },
  },
  "/api/v1/bulk/{id}/items": {
    get: {
      summary:
        "A bulk action's items (key, status, the refusal's reason) in the order they run, a page at a time (viewer; a tenant token sees its own tenant's)",
      path: bulkIdPath,
      query: bulkItemsQuery,
      response: bulkItemsResponse,
      errors: [400, 401, 404, 429, 503, 504],
    },
  },
  "/api/v1/bulk/{id}/cancel": {
    post: {
      summary: "Cancel a queued or running bulk action: no item is applied after it (operator; audited)",
      path: bulkIdPath,
      response: bulkActionResponse,
      errors: [400, 401, 403, 404, 429, 503, 504],
    },
  },
};
