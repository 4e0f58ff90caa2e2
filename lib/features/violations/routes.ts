import { type DeclaredRoute, route } from "../../auth/declare-route";
import { violationListResponse, violationsQuery } from "./contract";
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

/** The violations feature's routes of /api/v1 (lib/routes/openapi.ts gathers them into the document). */
export const violationsRoutes: DeclaredRoute[] = [listViolationsRoute];
