import type { ApiOperations } from "../../api/openapi";
import {
  findingDetail,
  findingIdPath,
  findingListResponse,
  findingStateBody,
  findingStateResponse,
  findingsQuery,
  reconciliationRunListResponse,
  runsQuery,
  startRunBody,
  startRunResponse,
} from "./contract";

/** The reconciliation feature's operations of /api/v1, by path template and method (lib/routes/openapi.ts gathers them). */
export const reconciliationOperations: ApiOperations = {
  "/api/v1/reconciliation/runs": {
    get: {
      summary:
        "Reconciliation runs, newest first: provider, window, status, progress, counts per kind, duration (viewer; counts, requester and error text for platform tokens)",
      query: runsQuery,
      response: reconciliationRunListResponse,
      errors: [400, 401, 429, 503, 504],
    },
    post: {
      summary:
        "Start a reconciliation of one provider's window now (platform admin; audited). 409 while a run of that window holds its lock.",
      body: startRunBody,
      response: startRunResponse,
      status: 202,
      errors: [400, 401, 403, 404, 409, 413, 429, 503, 504],
    },
  },
  "/api/v1/reconciliation/findings": {
    get: {
      summary:
        "Reconciliation findings in one state (open by default), newest last seen first (viewer; a tenant token sees its own tenant's findings, a platform token every tenant's, those naming no tenant too, or ?tenant=)",
      query: findingsQuery,
      response: findingListResponse,
      errors: [400, 401, 429, 503, 504],
    },
  },
  "/api/v1/reconciliation/findings/{id}": {
    get: {
      summary: "One finding with both sides: our effect and the provider's objects (viewer; another tenant's is 404)",
      path: findingIdPath,
      response: findingDetail,
      errors: [400, 401, 404, 429, 503, 504],
    },
  },
  "/api/v1/reconciliation/findings/{id}/acknowledge": {
    post: {
      summary:
        "Acknowledge a finding with a note: its state becomes acknowledged (operator; audited in the same transaction). 409 when it is acknowledged already or resolved.",
      path: findingIdPath,
      body: findingStateBody,
      response: findingStateResponse,
      errors: [400, 401, 403, 404, 409, 413, 429, 503, 504],
    },
  },
  "/api/v1/reconciliation/findings/{id}/resolve": {
    post: {
      summary:
        "Resolve a finding with a note: its state becomes resolved (operator; audited in the same transaction). 409 when it is resolved already.",
      path: findingIdPath,
      body: findingStateBody,
      response: findingStateResponse,
      errors: [400, 401, 403, 404, 409, 413, 429, 503, 504],
    },
  },
};
