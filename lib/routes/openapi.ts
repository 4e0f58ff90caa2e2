import { z } from "zod";
import { type ApiOperation, type ApiOperations, openApiDocument, operationIn } from "../api/openapi";
import { auditOperations } from "../features/audit/operations";
import { bulkActionsOperations } from "../features/bulk-actions/operations";
import { keysAndEffectsOperations } from "../features/keys-and-effects/operations";
import { overviewOperations } from "../features/overview/operations";
import { reconciliationOperations } from "../features/reconciliation/operations";
import { retentionAndGapsOperations } from "../features/retention-and-gaps/operations";
import { tokensAndSessionsOperations } from "../features/tokens-and-sessions/operations";
import { violationsOperations } from "../features/violations/operations";
import { workersOperations } from "../features/workers/operations";

/** Every operation of /api/v1: each feature's, and this document's own. */
export const OPERATIONS: ApiOperations = {
  ...keysAndEffectsOperations,
  ...violationsOperations,
  ...reconciliationOperations,
  ...auditOperations,
  ...tokensAndSessionsOperations,
  ...bulkActionsOperations,
  ...overviewOperations,
  ...retentionAndGapsOperations,
  ...workersOperations,
  "/api/v1/openapi.json": {
    get: {
      summary: "This document (viewer)",
      response: z.object({ openapi: z.string(), paths: z.record(z.string(), z.unknown()) }).loose(),
      errors: [401, 429],
    },
  },
};

/** GET /api/v1/openapi.json: the API as OpenAPI 3.1, generated from OPERATIONS. */
export const OPENAPI = openApiDocument(OPERATIONS);

/** The documented operation a request reaches, and the path's parameters. */
export function operationFor(
  method: string,
  pathname: string,
): { template: string; operation: ApiOperation; params: Record<string, string> } | undefined {
  return operationIn(OPERATIONS, method, pathname);
}
