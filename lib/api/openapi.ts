import { DELIVERY_ANSWERS, EFFECT_STATUSES } from "../console/effects-types";
import { ERROR_STATUS } from "./errors";

const error = { $ref: "#/components/schemas/Error" };
const errors = (...codes: number[]) =>
  Object.fromEntries(
    codes.map((code) => [
      String(code),
      {
        description: Object.entries(ERROR_STATUS)
          .filter(([, status]) => status === code)
          .map(([name]) => name)
          .join(" | "),
        content: { "application/json": { schema: error } },
      },
    ]),
  );
const json = (schema: unknown, description = "OK") => ({ description, content: { "application/json": { schema } } });
const str = { type: "string" };
const nullable = (schema: Record<string, unknown>) => ({ anyOf: [schema, { type: "null" }] });
const time = { type: "string", format: "date-time" };
const tenantParam = {
  name: "tenant",
  in: "query",
  required: false,
  description: "Platform tokens only (required for them on /effects); a tenant token always reads its own tenant.",
  schema: str,
};
const keyParam = {
  name: "key",
  in: "path",
  required: true,
  description:
    'The effect key, URL-encoded as one path segment (encodeURIComponent: "/" → %2F, "%" → %25, "?" → %3F, "#" → %23).',
  schema: str,
};

/** GET /api/v1/openapi.json: the API as OpenAPI 3.1. */
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
    schemas: {
      Error: {
        type: "object",
        required: ["error"],
        properties: {
          error: {
            type: "object",
            required: ["code", "message"],
            properties: {
              code: { type: "string", enum: Object.keys(ERROR_STATUS) },
              message: str,
              issues: { type: "array", items: { type: "object", properties: { path: str, message: str } } },
            },
          },
        },
      },
      EffectSummary: {
        type: "object",
        properties: {
          key: str,
          jobType: str,
          status: { type: "string", enum: EFFECT_STATUSES },
          policy: str,
          attempt: { type: "integer" },
          createdAt: time,
          completedAt: nullable(time),
          duplicateCount: { type: "integer" },
          firstMessageId: nullable(str),
        },
      },
      EffectDetail: {
        type: "object",
        properties: {
          tenant: str,
          key: str,
          jobType: str,
          status: { type: "string", enum: EFFECT_STATUSES },
          policy: str,
          attempts: { type: "integer" },
          outcome: { description: "The stored outcome after the redaction hook" },
          error: nullable(str),
          providerKey: str,
          firstMessageId: nullable(str),
          lastMessageId: nullable(str),
          createdAt: time,
          completedAt: nullable(time),
          updatedAt: time,
          duplicateCount: { type: "integer" },
          lastDuplicateAt: nullable(time),
          lastDuplicateGapSeconds: nullable({ type: "number" }),
          owner: nullable(str),
          leaseUntil: nullable(time),
          stuck: { type: "boolean" },
          verdict: str,
          steps: { type: "array", items: { type: "object" } },
          violations: {
            type: "array",
            description: "This key's own uncaught unique violations, newest first",
            items: { $ref: "#/components/schemas/UncaughtViolation" },
          },
          timeline: {
            type: "array",
            description: "Every delivery of this effect, oldest first (the newest 200 when there were more)",
            items: { $ref: "#/components/schemas/Delivery" },
          },
          timelineTotal: { type: "integer", description: "Deliveries recorded in all" },
        },
      },
      Delivery: {
        type: "object",
        description: "One delivery of a key as its worker recorded it: what the claim answered",
        properties: {
          deliveredAt: { ...time, description: "When the database answered the claim" },
          answer: { type: "string", enum: DELIVERY_ANSWERS },
          messageId: nullable(str),
          deliveryAttempt: nullable({ type: "integer", description: "The broker's delivery count" }),
          effectAttempt: { type: "integer", description: "The effect's attempt after this claim" },
          worker: str,
          claimMs: { type: "number", description: "How long the claim took, any wait for an in-flight copy included" },
          gapSeconds: nullable({ type: "number", description: "Seconds since the delivery before it" }),
          first: { type: "boolean", description: "The delivery that claimed the effect first" },
        },
      },
      UncaughtViolation: {
        type: "object",
        properties: {
          id: str,
          occurredAt: time,
          tenant: str,
          jobType: str,
          constraint: str,
          key: str,
          messageId: nullable(str),
          message: { ...nullable(str), description: "The handler's database error, after the redaction hook" },
        },
      },
    },
  },
  paths: {
    "/api/v1/effects": {
      get: {
        summary: "Search one tenant's effects by key prefix or fragment, newest first (viewer)",
        parameters: [
          tenantParam,
          {
            name: "q",
            in: "query",
            schema: str,
            description: 'A key prefix or fragment, case-insensitive: "ord-123" finds "capture:ord-123"',
          },
          { name: "status", in: "query", schema: { type: "string", enum: EFFECT_STATUSES } },
          { name: "jobType", in: "query", schema: str },
          { name: "from", in: "query", schema: time, description: "Default: 90 days ago" },
          { name: "to", in: "query", schema: time },
          { name: "cursor", in: "query", schema: str, description: "nextCursor of the previous page" },
          { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 200, default: 50 } },
        ],
        responses: {
          "200": json({
            type: "object",
            properties: {
              tenant: str,
              effects: { type: "array", items: { $ref: "#/components/schemas/EffectSummary" } },
              nextCursor: nullable(str),
            },
          }),
          ...errors(400, 401, 403, 429, 503, 504),
        },
      },
    },
    "/api/v1/effects/{key}": {
      get: {
        summary:
          "One effect: status, attempts, outcome, provider key, message ids, the job's steps, violations, its timeline of deliveries (viewer; audited)",
        parameters: [keyParam, tenantParam],
        responses: { "200": json({ $ref: "#/components/schemas/EffectDetail" }), ...errors(400, 401, 403, 404, 429, 503, 504) },
      },
    },
    "/api/v1/effects/{key}/release": {
      post: {
        summary:
          "Release a stuck in-progress claim whose lease expired, so the next delivery retries it (operator; audited in the same transaction). 409 for a live lease, a completed effect, an at-most-once step (which becomes abandoned on the next delivery instead).",
        parameters: [keyParam, tenantParam],
        responses: {
          "200": json({
            type: "object",
            properties: { released: { const: true }, key: str, status: { const: "failed" }, message: str },
          }),
          ...errors(400, 401, 403, 404, 409, 429, 503, 504),
        },
      },
    },
    "/api/v1/violations": {
      get: {
        summary:
          "Every uncaught unique violation, one per affected key and time, newest first (viewer; a tenant token sees its own tenant, a platform token every tenant or ?tenant=)",
        parameters: [
          tenantParam,
          { name: "jobType", in: "query", schema: str },
          { name: "constraint", in: "query", schema: str, description: "The violated constraint's name" },
          { name: "from", in: "query", schema: time, description: "Default: 90 days ago" },
          { name: "to", in: "query", schema: time },
          { name: "cursor", in: "query", schema: str, description: "nextCursor of the previous page" },
          { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 200, default: 50 } },
        ],
        responses: {
          "200": json({
            type: "object",
            properties: {
              tenant: nullable(str),
              violations: { type: "array", items: { $ref: "#/components/schemas/UncaughtViolation" } },
              nextCursor: nullable(str),
            },
          }),
          ...errors(400, 401, 429, 503, 504),
        },
      },
    },
    "/api/v1/audit": {
      get: {
        summary: "The audit log, newest first (admin; a tenant admin sees its tenant's rows)",
        parameters: [
          tenantParam,
          { name: "from", in: "query", schema: time },
          { name: "to", in: "query", schema: time },
          { name: "cursor", in: "query", schema: str },
          { name: "limit", in: "query", schema: { type: "integer", minimum: 1, maximum: 500, default: 100 } },
        ],
        responses: { "200": json({ type: "object" }), ...errors(400, 401, 403, 429, 503, 504) },
      },
    },
    "/api/v1/overview": {
      get: {
        summary:
          "The Overview's series: suppressions, deliveries, violations, claim rate and latency, tenants, stuck claims, alerts (viewer; a tenant token sees its own tenant)",
        parameters: [
          { name: "window", in: "query", schema: { type: "string", enum: ["15m", "1h", "6h", "24h", "7d", "30d"] } },
          { name: "from", in: "query", schema: time, description: "With to: a custom range instead of window" },
          { name: "to", in: "query", schema: time },
          { name: "jobType", in: "query", schema: str },
          tenantParam,
          {
            name: "width",
            in: "query",
            schema: { type: "integer" },
            description: "Chart width in px: bounds the points asked for",
          },
        ],
        responses: { "200": json({ type: "object" }), ...errors(400, 401, 429, 502, 503, 504) },
      },
    },
    "/api/v1/gaps": {
      get: {
        summary: "Redelivery gap histograms, percentiles, gaps per day and the latest late duplicates (viewer)",
        parameters: [
          { name: "range", in: "query", schema: { type: "string", enum: ["1h", "6h", "24h", "7d", "30d"] } },
          { name: "from", in: "query", schema: time },
          { name: "to", in: "query", schema: time },
          { name: "jobType", in: "query", schema: str },
          tenantParam,
        ],
        responses: { "200": json({ type: "object" }), ...errors(400, 401, 429, 503, 504) },
      },
    },
    "/api/v1/retention": {
      get: {
        summary:
          "The Retention page's data: partitions, settings, live workers, plan, the last runs (viewer; a tenant token gets the settings and its own largest gap, plan null)",
        parameters: [{ name: "runs", in: "query", schema: { type: "integer", minimum: 1, maximum: 200, default: 20 } }],
        responses: { "200": json({ type: "object" }), ...errors(400, 401, 429, 503, 504) },
      },
    },
    "/api/v1/retention/plan": {
      get: {
        summary: "What the partition manager would do now, and the guard that keeps each partition (viewer; platform tokens)",
        responses: { "200": json({ type: "object" }), ...errors(401, 403, 429, 503, 504) },
      },
    },
    "/api/v1/retention/apply": {
      post: {
        summary:
          "One maintenance run now: premake, detach concurrently, drop, index closed partitions concurrently (platform admin; audited)",
        responses: { "200": json({ type: "object" }), ...errors(401, 403, 409, 429, 503, 504) },
      },
    },
    "/api/v1/retention/settings": {
      get: {
        summary: "Retention, partition interval and premake count (viewer)",
        responses: { "200": json({ type: "object" }), ...errors(401, 429, 503) },
      },
      put: {
        summary:
          "Change the retention settings (platform admin; audited). Below a live worker's retry window: 409 unless force with a reason",
        requestBody: { content: { "application/json": { schema: { type: "object" } } } },
        responses: { "200": json({ type: "object" }), ...errors(400, 401, 403, 409, 429, 503) },
      },
    },
    "/api/v1/retention/advice": {
      get: {
        summary: "The retention advisor's recommendation, its inputs and its reasons (viewer; platform tokens)",
        responses: { "200": json({ type: "object" }), ...errors(400, 401, 403, 429, 503, 504) },
      },
    },
    "/api/v1/workers/{index}/metrics": {
      get: {
        summary: "The n-th configured worker's /metrics text, fetched by the console (viewer; platform tokens)",
        parameters: [{ name: "index", in: "path", required: true, schema: { type: "integer" } }],
        responses: { "200": { description: "Prometheus text" }, ...errors(401, 403, 404, 429) },
      },
    },
    "/api/v1/workers": {
      get: {
        summary: "Workers' live counters (viewer; proxyPath for platform tokens only)",
        responses: { "200": json({ type: "object" }), ...errors(401, 429) },
      },
    },
    "/api/v1/health": {
      get: {
        summary: "Whether PostgreSQL answers (public: polled before anyone can sign in)",
        security: [],
        responses: { "200": json({ type: "object" }), ...errors(503) },
      },
    },
    "/api/v1/openapi.json": { get: { summary: "This document (viewer)", responses: { "200": json({ type: "object" }) } } },
  },
} as const;
