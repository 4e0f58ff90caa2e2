import { ApiError } from "../../api/errors";
import { type DeclaredRoute, refusal, route } from "../../auth/declare-route";
import { readFindingAudited } from "./audited-reads";
import {
  findingDetail,
  findingIdPath,
  findingListResponse,
  findingStateBody,
  findingStateResponse,
  findingsQuery,
  reconciliationRunListResponse,
  reconciliationWindowListResponse,
  runsQuery,
  startRunBody,
  startRunResponse,
  windowsQuery,
} from "./contract";
import { changeFindingState, FindingStateRefusedError } from "./finding-state";
import { listFindings } from "./list-findings";
import { listReconciliationRuns } from "./list-reconciliation-runs";
import { listReconciliationWindows } from "./list-reconciliation-windows";
import { startReconciliation } from "./start-reconciliation";

export const listRunsRoute = route({
  method: "GET",
  path: "/api/v1/reconciliation/runs",
  role: "viewer",
  summary:
    "Reconciliation runs, newest first, of every window or one (?windowFrom=&windowTo=): provider, window, status, progress, counts per kind, duration (viewer; counts, requester and error text for platform tokens)",
  query: runsQuery,
  response: reconciliationRunListResponse,
  errors: [400, 401, 429, 503, 504],
  handler: ({ scope, query }) => listReconciliationRuns(scope, query),
});

export const listWindowsRoute = route({
  method: "GET",
  path: "/api/v1/reconciliation/windows",
  role: "viewer",
  summary:
    "Each provider's reconciled window once, by its latest run, newest first, with how many runs it had (its reruns: GET /api/v1/reconciliation/runs?provider=&windowFrom=&windowTo=). Viewer; the latest run as the runs list shows it",
  query: windowsQuery,
  response: reconciliationWindowListResponse,
  errors: [400, 401, 429, 503, 504],
  handler: ({ scope, query }) => listReconciliationWindows(scope, query),
});

export const startRunRoute = route({
  method: "POST",
  path: "/api/v1/reconciliation/runs",
  role: "admin",
  platform: "a reconciliation run",
  summary:
    "Start a reconciliation of one provider's window now (platform admin; audited). 409 while a run of that window holds its lock.",
  body: startRunBody,
  response: startRunResponse,
  status: 202,
  errors: [400, 401, 403, 404, 409, 413, 429, 501, 503, 504],
  handler: async ({ principal, ip, body }) => ({
    run: await startReconciliation({ principal, provider: body.provider, from: body.from, to: body.to, ip }),
  }),
});

export const listFindingsRoute = route({
  method: "GET",
  path: "/api/v1/reconciliation/findings",
  role: "viewer",
  summary:
    "Reconciliation findings in one state (open by default), newest last seen first (viewer; a tenant token sees its own tenant's findings, a platform token every tenant's, those naming no tenant too, or ?tenant=)",
  query: findingsQuery,
  response: findingListResponse,
  errors: [400, 401, 429, 503, 504],
  handler: ({ scope, query }) => listFindings(scope, query),
});

export const getFindingRoute = route({
  method: "GET",
  path: "/api/v1/reconciliation/findings/{id}",
  role: "viewer",
  summary: "One finding with both sides: our effect and the provider's objects (viewer; another tenant's is 404)",
  params: findingIdPath,
  response: findingDetail,
  errors: [400, 401, 404, 429, 503, 504],
  handler: async ({ principal, scope, params, ip }) => {
    const finding = await readFindingAudited({ principal, scope, id: params.id, ip });
    if (!finding) throw new ApiError("NOT_FOUND", "no finding with this id");
    return finding;
  },
});

export const acknowledgeFindingRoute = route({
  method: "POST",
  path: "/api/v1/reconciliation/findings/{id}/acknowledge",
  role: "operator",
  summary:
    "Acknowledge a finding with a note: its state becomes acknowledged (operator; audited in the same transaction). 409 when it is acknowledged already or resolved.",
  params: findingIdPath,
  body: findingStateBody,
  response: findingStateResponse,
  errors: [400, 401, 403, 404, 409, 413, 429, 503, 504],
  handler: ({ principal, scope, params, body, ip }) =>
    changeFindingState({ principal, scope, id: params.id, action: "acknowledge", note: body.note, ip }).catch(
      refusal(FindingStateRefusedError),
    ),
});

export const resolveFindingRoute = route({
  method: "POST",
  path: "/api/v1/reconciliation/findings/{id}/resolve",
  role: "operator",
  summary:
    "Resolve a finding with a note: its state becomes resolved (operator; audited in the same transaction). 409 when it is resolved already.",
  params: findingIdPath,
  body: findingStateBody,
  response: findingStateResponse,
  errors: [400, 401, 403, 404, 409, 413, 429, 503, 504],
  handler: ({ principal, scope, params, body, ip }) =>
    changeFindingState({ principal, scope, id: params.id, action: "resolve", note: body.note, ip }).catch(
      refusal(FindingStateRefusedError),
    ),
});

/** The reconciliation feature's routes of /api/v1 (lib/routes/openapi.ts gathers them into the document). */
export const reconciliationRoutes: DeclaredRoute[] = [
  listRunsRoute,
  listWindowsRoute,
  startRunRoute,
  listFindingsRoute,
  getFindingRoute,
  acknowledgeFindingRoute,
  resolveFindingRoute,
];
