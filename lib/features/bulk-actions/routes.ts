import { jsonResponse } from "../../api/errors";
import { type DeclaredRoute, route } from "../../auth/declare-route";
import {
  cancelBulkAction,
  dryRunBulkAcknowledge,
  dryRunBulkRelease,
  getBulkAction,
  listBulkItems,
  startBulkAcknowledge,
  startBulkRelease,
} from "./bulk-actions";
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

export const bulkReleaseRoute = route({
  method: "POST",
  path: "/api/v1/bulk/release",
  role: "operator",
  summary:
    "Release every stuck claim (in progress, lease expired, not at-most-once) of one tenant matching the Keys page's filter. dryRun: 200, how many and a sample. Else 202: a background action, capped at BULK_ACTION_MAX_ITEMS (409 past it), each key released by the library and audited (operator)",
  body: bulkReleaseBody,
  response: bulkDryRunResponse,
  alsoAnswers: [{ status: 202, response: bulkActionResponse, description: "Started" }],
  errors: [400, 401, 403, 409, 413, 429, 503, 504],
  handler: async ({ scope, principal, ip, body }) => {
    const filter = { q: body.q?.trim() || null, jobType: body.jobType ?? null };
    if (body.dryRun) return dryRunBulkRelease({ scope, tenant: body.tenant, filter });
    const action = await startBulkRelease({ scope, principal, ip, tenant: body.tenant, filter });
    return jsonResponse({ action }, { status: 202 });
  },
});

export const bulkAcknowledgeRoute = route({
  method: "POST",
  path: "/api/v1/bulk/acknowledge-findings",
  role: "operator",
  summary:
    "Acknowledge, with one note, every open reconciliation finding matching the Reconciliation page's filter (a platform token without a tenant: every tenant's). dryRun: 200, how many and a sample. Else 202: a background action, capped at BULK_ACTION_MAX_ITEMS (409 past it), each finding acknowledged and audited (operator)",
  body: bulkAcknowledgeBody,
  response: bulkAcknowledgeDryRunResponse,
  alsoAnswers: [{ status: 202, response: bulkActionResponse, description: "Started" }],
  errors: [400, 401, 403, 409, 413, 429, 503, 504],
  handler: async ({ scope, principal, ip, body }) => {
    const filter = {
      kind: body.kind ?? null,
      provider: body.provider ?? null,
      jobType: body.jobType ?? null,
      from: body.from ?? null,
      to: body.to ?? null,
    };
    if (body.dryRun) return dryRunBulkAcknowledge({ scope, tenant: body.tenant, filter });
    // The body's refinement requires the note unless dryRun.
    const note = body.note as string;
    const action = await startBulkAcknowledge({ scope, principal, ip, tenant: body.tenant, filter, note });
    return jsonResponse({ action }, { status: 202 });
  },
});

export const getBulkActionRoute = route({
  method: "GET",
  path: "/api/v1/bulk/{id}",
  role: "viewer",
  summary: "A bulk action's state and progress (viewer; a tenant token sees its own tenant's)",
  params: bulkIdPath,
  response: bulkActionResponse,
  errors: [400, 401, 404, 429, 503, 504],
  handler: async ({ scope, params }) => ({ action: await getBulkAction(scope, params.id) }),
});

export const listBulkItemsRoute = route({
  method: "GET",
  path: "/api/v1/bulk/{id}/items",
  role: "viewer",
  summary:
    "A bulk action's items (key, status, the refusal's reason) in the order they run, a page at a time (viewer; a tenant token sees its own tenant's)",
  params: bulkIdPath,
  query: bulkItemsQuery,
  response: bulkItemsResponse,
  errors: [400, 401, 404, 429, 503, 504],
  handler: ({ scope, params, query: { cursor, limit } }) => listBulkItems(scope, params.id, { cursor, limit }),
});

export const cancelBulkActionRoute = route({
  method: "POST",
  path: "/api/v1/bulk/{id}/cancel",
  role: "operator",
  summary: "Cancel a queued or running bulk action: no item is applied after it (operator; audited)",
  params: bulkIdPath,
  response: bulkActionResponse,
  errors: [400, 401, 403, 404, 429, 503, 504],
  handler: async ({ scope, principal, ip, params }) => ({
    action: await cancelBulkAction({ scope, principal, ip, id: params.id }),
  }),
});

/** The bulk-actions feature's routes of /api/v1 (lib/routes/openapi.ts gathers them into the document). */
export const bulkActionsRoutes: DeclaredRoute[] = [
  bulkReleaseRoute,
  bulkAcknowledgeRoute,
  getBulkActionRoute,
  listBulkItemsRoute,
  cancelBulkActionRoute,
];
