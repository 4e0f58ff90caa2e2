import { z } from "zod";
import {
  adminIdPath,
  adminListQuery,
  createdTokenResponse,
  createTokenBody,
  revokedSessionResponse,
  revokedTokenResponse,
  sessionsResponse,
  tokensResponse,
} from "../contract/admin";
import { auditExportQuery, auditIntegrityView, auditQuery, auditResponse } from "../contract/audit";
import {
  bulkAcknowledgeBody,
  bulkAcknowledgeDryRunResponse,
  bulkActionResponse,
  bulkDryRunResponse,
  bulkIdPath,
  bulkItemsQuery,
  bulkItemsResponse,
  bulkReleaseBody,
} from "../contract/bulk";
import {
  effectDetail,
  effectKeyPath,
  effectSearchQuery,
  effectSearchResponse,
  releaseResponse,
  tenantQuery,
} from "../contract/effects";
import { gapsQuery, gapsResponse } from "../contract/gaps";
import { healthResponse } from "../contract/health";
import { overviewQuery, overviewResponse } from "../contract/overview";
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
} from "../contract/reconciliation";
import {
  advice,
  adviceApplyBody,
  advicePreview,
  adviceQuery,
  applyResultView,
  planView,
  retentionQuery,
  retentionSettingsBody,
  retentionSettingsView,
  retentionView,
  settingsUpdateView,
} from "../contract/retention";
import { violationListResponse, violationsQuery } from "../contract/violations";
import { workerMetricsPath, workersResponse } from "../contract/workers";
import { ERROR_STATUS } from "./errors";

/**
 * The HTTP API as data: each operation names the contract's schemas (lib/contract/<family>.ts)
 * that its route validates with and answers, and the OpenAPI 3.1 document is generated from them
 * with zod's own JSON Schema output, so the document cannot disagree with the validation. A new
 * route adds its operation here (docs/architecture.md, "A new admin action").
 */
export interface Operation {
  summary: string;
  /** The query string's fields (a z.object, refinements allowed). */
  query?: z.ZodObject;
  /** The path template's fields, by name. */
  path?: z.ZodObject;
  body?: z.ZodType;
  /** What a success answers: JSON of this schema, or text (Prometheus, CSV/NDJSON). */
  response: z.ZodType | "text";
  /** The success status `response` is answered with: 200 unless said (201 created, 202 accepted). */
  status?: 200 | 201 | 202;
  /** The text response's media types and what it is (default: Prometheus text). */
  text?: { mediaTypes: string[]; description: string };
  /** Other success answers, by status (POST /api/v1/bulk/release: 200 a dry run, 202 the started action). */
  alsoAnswers?: { status: 200 | 201 | 202; response: z.ZodType; description: string }[];
  errors: number[];
  /** Answered without a token (health is polled before anyone can sign in). */
  public?: true;
}

type Method = "get" | "post" | "put" | "patch" | "delete";

/** Every operation of /api/v1, by path template and method. */
export const OPERATIONS: Record<string, Partial<Record<Method, Operation>>> = {
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
  "/api/v1/violations": {
    get: {
      summary:
        "Every uncaught unique violation, one per affected key and time, newest first (viewer; a tenant token sees its own tenant, a platform token every tenant or ?tenant=)",
      query: violationsQuery,
      response: violationListResponse,
      errors: [400, 401, 429, 503, 504],
    },
  },
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
  "/api/v1/audit": {
    get: {
      summary: "The audit log, newest first (admin; a tenant admin sees its tenant's rows)",
      query: auditQuery,
      response: auditResponse,
      errors: [400, 401, 403, 429, 503, 504],
    },
  },
  "/api/v1/audit/export": {
    get: {
      summary:
        "The filtered audit log as a file, streamed newest first: CSV (formula-leading cells neutralised) or NDJSON (admin; the export is itself audited)",
      query: auditExportQuery,
      response: "text",
      text: {
        mediaTypes: ["text/csv", "application/x-ndjson"],
        description: "The rows, one per line, up to the newest that existed when the export began",
      },
      errors: [400, 401, 403, 429, 503, 504],
    },
  },
  "/api/v1/audit/integrity": {
    get: {
      summary:
        "Whether the audit log's hash chain holds: checked in slices from where the last check stopped, fully again hourly (admin; where it broke: platform admins)",
      response: auditIntegrityView,
      errors: [401, 403, 429, 503, 504],
    },
  },
  "/api/v1/tokens": {
    get: {
      summary:
        "Machine tokens, newest first, revoked and expired ones too; never a secret (admin; a tenant admin sees its tenant's)",
      query: adminListQuery,
      response: tokensResponse,
      errors: [400, 401, 403, 429, 503, 504],
    },
    post: {
      summary:
        "Create a token; its secret is in this answer only (admin; audited). A tenant admin's token is bound to its tenant; a platform admin's to `tenant`, or to the platform when omitted or null",
      body: createTokenBody,
      response: createdTokenResponse,
      status: 201,
      errors: [400, 401, 403, 413, 429, 503, 504],
    },
  },
  "/api/v1/tokens/{id}/revoke": {
    post: {
      summary: "Revoke a token (idempotent); its console sessions end with it (admin; audited)",
      path: adminIdPath,
      response: revokedTokenResponse,
      errors: [400, 401, 403, 404, 429, 503, 504],
    },
  },
  "/api/v1/sessions": {
    get: {
      summary:
        "Live console sessions (token and OIDC): who, how signed in, from where, last seen; named by a public id that grants nothing (admin; a tenant admin sees its tenant's)",
      query: adminListQuery,
      response: sessionsResponse,
      errors: [400, 401, 403, 429, 503, 504],
    },
  },
  "/api/v1/sessions/{id}/revoke": {
    post: {
      summary: "End a live session by its public id: its next request is refused (admin; audited)",
      path: adminIdPath,
      response: revokedSessionResponse,
      errors: [400, 401, 403, 404, 429, 503, 504],
    },
  },
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
  "/api/v1/overview": {
    get: {
      summary:
        "The Overview's series: suppressions, deliveries, violations, claim rate and latency, tenants, stuck claims, alerts (viewer; a tenant token sees its own tenant)",
      query: overviewQuery,
      response: overviewResponse,
      errors: [400, 401, 429, 502, 503, 504],
    },
  },
  "/api/v1/gaps": {
    get: {
      summary: "Redelivery gap histograms, percentiles, gaps per day and the latest late duplicates (viewer)",
      query: gapsQuery,
      response: gapsResponse,
      errors: [400, 401, 429, 503, 504],
    },
  },
  "/api/v1/retention": {
    get: {
      summary:
        "The Retention page's data: partitions, settings, live workers, plan, the last runs (viewer; a tenant token gets the settings and its own largest gap, plan null)",
      query: retentionQuery,
      response: retentionView,
      errors: [400, 401, 429, 503, 504],
    },
  },
  "/api/v1/retention/plan": {
    get: {
      summary: "What the partition manager would do now, and the guard that keeps each partition (viewer; platform tokens)",
      response: planView,
      errors: [401, 403, 429, 503, 504],
    },
  },
  "/api/v1/retention/apply": {
    post: {
      summary:
        "One maintenance run now: premake, detach concurrently, drop, index closed partitions concurrently (platform admin; audited)",
      response: applyResultView,
      errors: [401, 403, 409, 429, 503, 504],
    },
  },
  "/api/v1/retention/settings": {
    get: {
      summary: "Retention, partition interval and premake count (viewer)",
      response: retentionSettingsView,
      errors: [401, 429, 503],
    },
    put: {
      summary:
        "Change the retention settings (platform admin; audited). Below a live worker's retry window: 409 unless force with a reason",
      body: retentionSettingsBody,
      response: settingsUpdateView,
      errors: [400, 401, 403, 409, 413, 429, 503],
    },
  },
  "/api/v1/retention/advice": {
    get: {
      summary: "The retention advisor's recommendation, its inputs and its reasons (viewer; platform tokens)",
      query: adviceQuery,
      response: advice,
      errors: [400, 401, 403, 429, 503, 504],
    },
  },
  "/api/v1/retention/advice/preview": {
    get: {
      summary:
        "The advice as a change of the settings: before and after, what must change first, the plan it implies (viewer; platform tokens)",
      query: adviceQuery,
      response: advicePreview,
      errors: [400, 401, 403, 429, 503, 504],
    },
  },
  "/api/v1/retention/advice/apply": {
    post: {
      summary:
        "Apply the previewed advice (platform admin; audited). 409 RETENTION_STALE when the advice or the settings moved since the preview; a refusal's issues name the setting in the way",
      query: adviceQuery,
      body: adviceApplyBody,
      response: settingsUpdateView,
      errors: [400, 401, 403, 409, 413, 429, 503, 504],
    },
  },
  "/api/v1/workers/{index}/metrics": {
    get: {
      summary: "The n-th configured worker's /metrics text, fetched by the console (viewer; platform tokens)",
      path: workerMetricsPath,
      response: "text",
      errors: [401, 403, 404, 429],
    },
  },
  "/api/v1/workers": {
    get: {
      summary: "Workers' live counters (viewer; proxyPath for platform tokens only)",
      response: workersResponse,
      errors: [401, 429, 500],
    },
  },
  "/api/v1/health": {
    get: {
      summary: "Whether PostgreSQL answers (public: polled before anyone can sign in)",
      response: healthResponse,
      errors: [503],
      public: true,
    },
  },
  "/api/v1/openapi.json": {
    get: {
      summary: "This document (viewer)",
      response: z.object({ openapi: z.string(), paths: z.record(z.string(), z.unknown()) }).loose(),
      errors: [401, 429],
    },
  },
};

/** Every 4xx and 5xx body: a code of lib/api/errors.ts's table, a message, and the fields at fault. */
export const errorBody = z.object({
  error: z.object({
    code: z.enum(Object.keys(ERROR_STATUS) as [keyof typeof ERROR_STATUS]),
    message: z.string(),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  }),
});

type JsonSchema = Record<string, unknown>;

/** A zod schema as the document's JSON Schema: what a client sends (`input`) or receives (`output`). */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  return rest;
}

/** One parameter per field of a query or path object, its description lifted out of the schema. */
function parameters(object: z.ZodObject, where: "query" | "path"): JsonSchema[] {
  return Object.entries(object.shape).map(([name, field]) => {
    const { description, ...schema } = jsonSchema(field as z.ZodType, "input");
    return {
      name,
      in: where,
      required: where === "path" || !(field as z.ZodType).safeParse(undefined).success,
      ...(description ? { description } : {}),
      schema,
    };
  });
}

const json = (schema: JsonSchema, description: string) => ({ description, content: { "application/json": { schema } } });

function errorResponses(codes: number[]) {
  return Object.fromEntries(
    codes.map((code) => [
      String(code),
      json(
        { $ref: "#/components/schemas/Error" },
        Object.entries(ERROR_STATUS)
          .filter(([, status]) => status === code)
          .map(([name]) => name)
          .join(" | "),
      ),
    ]),
  );
}

function documentOperation(operation: Operation) {
  const params = [
    ...(operation.path ? parameters(operation.path, "path") : []),
    ...(operation.query ? parameters(operation.query, "query") : []),
  ];
  return {
    summary: operation.summary,
    ...(operation.public ? { security: [] } : {}),
    ...(params.length ? { parameters: params } : {}),
    ...(operation.body
      ? { requestBody: { required: true, content: { "application/json": { schema: jsonSchema(operation.body, "input") } } } }
      : {}),
    responses: {
      [String(operation.status ?? 200)]:
        operation.response === "text"
          ? {
              description: operation.text?.description ?? "Prometheus text",
              content: Object.fromEntries(
                (operation.text?.mediaTypes ?? ["text/plain"]).map((type) => [type, { schema: { type: "string" } }]),
              ),
            }
          : json(jsonSchema(operation.response, "output"), "OK"),
      ...Object.fromEntries(
        (operation.alsoAnswers ?? []).map((also) => [
          String(also.status),
          json(jsonSchema(also.response, "output"), also.description),
        ]),
      ),
      ...errorResponses(operation.errors),
    },
  };
}

/** GET /api/v1/openapi.json: the API as OpenAPI 3.1, generated from OPERATIONS. */
export const OPENAPI = {
  openapi: "3.1.0",
  info: {
    title: "Onceboard admin API",
    version: "1",
    description:
      "Tenant-scoped effect lookups. Authenticate with `Authorization: Bearer <token>` (npm run token -- create) or a console session. The tenant comes from the token; another tenant's key answers 404 exactly like a missing one. Every key read and every write is audited. Per-token rate limit: 429 with Retry-After.",
  },
  security: [{ bearer: [] }],
  components: {
    securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
    schemas: { Error: jsonSchema(errorBody, "output") },
  },
  paths: Object.fromEntries(
    Object.entries(OPERATIONS).map(([template, methods]) => [
      template,
      Object.fromEntries(Object.entries(methods).map(([method, operation]) => [method, documentOperation(operation)])),
    ]),
  ),
};

/** The path parameters of `pathname` under `template` (/api/v1/effects/{key}), or undefined when it does not match. */
export function matchTemplate(template: string, pathname: string): Record<string, string> | undefined {
  const names = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
  const values = new RegExp(`^${template.replace(/\{\w+\}/g, "([^/]+)")}$`).exec(pathname)?.slice(1);
  return values && Object.fromEntries(names.map((name, i) => [name, values[i] ?? ""]));
}

/** The documented operation a request reaches, and the path's parameters. */
export function operationFor(
  method: string,
  pathname: string,
): { template: string; operation: Operation; params: Record<string, string> } | undefined {
  for (const [template, methods] of Object.entries(OPERATIONS)) {
    const operation = methods[method.toLowerCase() as Method];
    const params = operation && matchTemplate(template, pathname);
    if (operation && params) return { template, operation, params };
  }
  return undefined;
}
