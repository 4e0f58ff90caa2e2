import { type DeclaredRoute, route } from "../../auth/declare-route";
import { violationListResponse, violationsQuery, violationTotalsQuery, violationTotalsResponse } from "./contract";
import { getViolationTotals } from "./get-violation-groups";
import { listViolations } from "./list-violations";

export const listViolationsRoute = route({
  method: "GET",
  path: "/api/v1/violations",
  role: "viewer",
  summary:
    "Every uncaught unique violation, one per affected key and time, newest first (viewer; a tenant token sees its own tenant, a platform token every tenant or ?tenant=)",
  query: violationsQuery,
  response: violationListResponse,
  errors: [400, 401, 429, 503, 504],
  handler: ({ scope, query }) => listViolations(scope, query),
});

export const violationGroupsRoute = route({
  method: "GET",
  path: "/api/v1/violations/groups",
  role: "viewer",
  summary:
    "The totals of GET /api/v1/violations with the same filter: every violation, and per (tenant, job type, constraint) group its count, distinct keys and last occurrence, most first (viewer; a tenant token counts its own tenant)",
  query: violationTotalsQuery,
  response: violationTotalsResponse,
  errors: [400, 401, 429, 503, 504],
  handler: ({ scope, query }) => getViolationTotals(scope, query),
});

/** The violations feature's routes of /api/v1 (lib/routes/openapi.ts gathers them into the document). */
export const violationsRoutes: DeclaredRoute[] = [listViolationsRoute, violationGroupsRoute];
