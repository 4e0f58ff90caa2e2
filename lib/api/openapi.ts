import { z } from "zod";
import { ERROR_STATUS } from "./errors";

/**
 * The HTTP API as data: each operation names the contract's schemas (lib/features/<feature>/contract.ts)
 * that its route validates with and answers, and the OpenAPI 3.1 document is generated from them
 * with zod's own JSON Schema output, so the document cannot disagree with the validation. Each
 * route declares its operation once, with its handler: route() in lib/auth/declare-route.ts.
 */
export interface ApiOperation {
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

export type Method = "get" | "post" | "put" | "patch" | "delete";

/** Operations of /api/v1 by path template and method: each feature's routes.ts declares its own. */
export type ApiOperations = Record<string, Partial<Record<Method, ApiOperation>>>;

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

function documentOperation(operation: ApiOperation) {
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

/** The API as OpenAPI 3.1, generated from `operations` (GET /api/v1/openapi.json serves lib/routes/openapi.ts's). */
export function openApiDocument(operations: ApiOperations) {
  return {
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
      Object.entries(operations).map(([template, methods]) => [
        template,
        Object.fromEntries(Object.entries(methods).map(([method, operation]) => [method, documentOperation(operation)])),
      ]),
    ),
  };
}

/** The path parameters of `pathname` under `template` (/api/v1/effects/{key}), or undefined when it does not match. */
export function matchTemplate(template: string, pathname: string): Record<string, string> | undefined {
  const names = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
  const values = new RegExp(`^${template.replace(/\{\w+\}/g, "([^/]+)")}$`).exec(pathname)?.slice(1);
  return values && Object.fromEntries(names.map((name, i) => [name, values[i] ?? ""]));
}

/** The documented operation a request reaches, and the path's parameters. */
export function operationIn(
  operations: ApiOperations,
  method: string,
  pathname: string,
): { template: string; operation: ApiOperation; params: Record<string, string> } | undefined {
  for (const [template, methods] of Object.entries(operations)) {
    const operation = methods[method.toLowerCase() as Method];
    const params = operation && matchTemplate(template, pathname);
    if (operation && params) return { template, operation, params };
  }
  return undefined;
}
