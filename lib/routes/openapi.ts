import { z } from "zod";
import { type ApiOperation, type ApiOperations, openApiDocument, operationIn } from "../api/openapi";
import { type DeclaredRoute, operationsOf, route } from "../auth/declare-route";
import { auditRoutes } from "../features/audit/routes";
import { bulkActionsRoutes } from "../features/bulk-actions/routes";
import { keysAndEffectsRoutes } from "../features/keys-and-effects/routes";
import { overviewRoutes } from "../features/overview/routes";
import { reconciliationRoutes } from "../features/reconciliation/routes";
import { retentionAndGapsRoutes } from "../features/retention-and-gaps/routes";
import { tokensAndSessionsRoutes } from "../features/tokens-and-sessions/routes";
import { violationsRoutes } from "../features/violations/routes";
import { workersRoutes } from "../features/workers/routes";

/** GET /api/v1/openapi.json: the API as OpenAPI 3.1, generated from every declared route. */
export const openApiRoute = route({
  method: "GET",
  path: "/api/v1/openapi.json",
  role: "viewer",
  summary: "This document (viewer)",
  response: z.object({ openapi: z.string(), paths: z.record(z.string(), z.unknown()) }).loose(),
  errors: [401, 429],
  handler: async () => OPENAPI,
});

/** Every declared route of /api/v1: each feature's, and this document's own. */
export const ROUTES: DeclaredRoute[] = [
  ...keysAndEffectsRoutes,
  ...violationsRoutes,
  ...reconciliationRoutes,
  ...auditRoutes,
  ...tokensAndSessionsRoutes,
  ...bulkActionsRoutes,
  ...overviewRoutes,
  ...retentionAndGapsRoutes,
  ...workersRoutes,
  openApiRoute,
];

/** Every operation of /api/v1 by path template and method, as the routes declare them. */
export const OPERATIONS: ApiOperations = operationsOf(ROUTES);

export const OPENAPI = openApiDocument(OPERATIONS);

/** The documented operation a request reaches, and the path's parameters. */
export function operationFor(
  method: string,
  pathname: string,
): { template: string; operation: ApiOperation; params: Record<string, string> } | undefined {
  return operationIn(OPERATIONS, method, pathname);
}
