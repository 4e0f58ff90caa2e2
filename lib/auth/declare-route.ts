import type { z } from "zod";
import { ApiError, handleErrors, jsonResponse, otherMethods } from "../api/errors";
import type { ApiOperation, Method } from "../api/openapi";
import { parseJsonBody, parsePathParam, parseSearchParams } from "../api/parse";
import { withHttpMetrics } from "../console/http-metrics";
import type { Principal, Role } from "./auth-types";
import type { Scope } from "./scope";
import { withAuth } from "./with-auth";

type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;
type Answer<R> = R extends z.ZodType ? z.input<R> : never;

/** What a declared route's handler gets: the request's parts already parsed with the declared schemas. */
export interface RouteInput<Q, B, P> {
  request: Request;
  query: Parsed<Q>;
  body: Parsed<B>;
  params: Parsed<P>;
  principal: Principal;
  scope: Scope;
  /** The client address, for the audit log. */
  ip: string | null;
}

/**
 * One /api/v1 operation, declared once: the OpenAPI document is generated from the same object
 * whose schemas parse the request (lib/routes/openapi.ts gathers every feature's routes.ts).
 */
export interface RouteDeclaration<
  Q extends z.ZodObject | undefined,
  B extends z.ZodType | undefined,
  P extends z.ZodObject | undefined,
  R extends z.ZodType | "text",
> extends Omit<ApiOperation, "query" | "path" | "body" | "response" | "public"> {
  method: HttpMethod;
  /** The path template, as the document writes it: /api/v1/effects/{key}. */
  path: string;
  role: Role;
  /** Refused 403 for a tenant's principal before anything is parsed: what spans every tenant (Scope.requirePlatform). */
  platform?: string;
  query?: Q;
  body?: B;
  /** The path template's fields; parsed from the router's parameters unless `paramsFrom` reads them. */
  params?: P;
  /** Reads the path's fields itself (an effect key is decoded once from the raw path, not the router's parameter). */
  paramsFrom?: (request: Request, raw: Record<string, string>) => Parsed<P>;
  response: R;
  /** Times the route in the console's HTTP histogram (lib/console/http-metrics.ts). */
  timed?: true;
  /** A Response goes out as it is (another status, a stream); anything else is JSON at `status`. */
  handler: (input: RouteInput<Q, B, P>) => Promise<Response | Answer<R>>;
}

type NextHandler = (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;

/** A declared route: its place, its operation in the document, and the Next.js handler made from the same declaration. */
export interface DeclaredRoute {
  method: HttpMethod;
  path: string;
  /** Who may call it: a role withAuth checks, or public (no token). */
  role: Role | "public";
  operation: ApiOperation;
  handler: NextHandler;
}

/** Marks the handlers serve() returns with their declarations, so a test can hold each route file to its folder. */
export const DECLARED = Symbol.for("onceboard.declaredRoute");

const answer = (result: unknown, status: number): Response =>
  result instanceof Response ? result : jsonResponse(result, { status });

function parsePath(schema: z.ZodObject, raw: Record<string, string>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(schema.shape).map(([name, field]) => [name, parsePathParam(field as z.ZodType, name, raw[name] ?? "")]),
  );
}

/**
 * Declares a guarded route: withAuth(role) first (who, CSRF, role, read-only), then the platform
 * check, then path → query → body, each a 400 naming the field; the handler's answer at `status`.
 */
export function route<
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  P extends z.ZodObject | undefined = undefined,
  R extends z.ZodType | "text" = z.ZodType,
>(declaration: RouteDeclaration<Q, B, P, R>): DeclaredRoute {
  const { method, path, role, platform, query, body, params, paramsFrom, timed, handler, ...documented } = declaration;
  const guarded = withAuth(role, async (request, { principal, scope, params: raw, ip }) => {
    if (platform) scope.requirePlatform(platform);
    const input = {
      request,
      principal,
      scope,
      ip,
      params: (paramsFrom ? paramsFrom(request, raw) : params ? parsePath(params, raw) : undefined) as Parsed<P>,
      query: (query ? parseSearchParams(query, new URL(request.url)) : undefined) as Parsed<Q>,
      body: (body ? await parseJsonBody(body, request) : undefined) as Parsed<B>,
    };
    return answer(await handler(input), documented.status ?? 200);
  });
  return {
    method,
    path,
    role,
    operation: { ...documented, ...(query ? { query } : {}), ...(params ? { path: params } : {}), ...(body ? { body } : {}) },
    handler: timed ? withHttpMetrics(path, guarded) : guarded,
  };
}

/** Declares a route answered without a token (health: polled before anyone can sign in; see proxy.ts). */
export function publicRoute(declaration: {
  method: HttpMethod;
  path: string;
  summary: string;
  response: z.ZodType;
  errors: number[];
  handler: () => Promise<unknown>;
}): DeclaredRoute {
  const { method, path, handler, ...documented } = declaration;
  return {
    method,
    path,
    role: "public",
    operation: { ...documented, public: true },
    handler: handleErrors(async () => answer(await handler(), 200)),
  };
}

/**
 * The Next.js handlers of one path: each declared method, and a JSON 405 naming the allowed ones
 * for the rest.   export const { GET, POST, PUT, PATCH, DELETE } = serve(listTokens, createToken);
 */
export function serve(...routes: DeclaredRoute[]): Record<HttpMethod, NextHandler> {
  const [first] = routes;
  if (!first || routes.some((r) => r.path !== first.path))
    throw new Error(`serve() takes the routes of one path: ${routes.map((r) => r.path).join(", ")}`);
  const handlers: Record<HttpMethod, NextHandler> = otherMethods(routes.map((r) => r.method));
  for (const declared of routes) {
    const handler: NextHandler = (request, context) => declared.handler(request, context);
    Object.defineProperty(handler, DECLARED, { value: declared });
    handlers[declared.method] = handler;
  }
  return handlers;
}

/** Operations by path template and method, in declaration order: what openApiDocument() documents. */
export function operationsOf(routes: DeclaredRoute[]): Record<string, Partial<Record<Method, ApiOperation>>> {
  const operations: Record<string, Partial<Record<Method, ApiOperation>>> = {};
  for (const r of routes) {
    operations[r.path] ??= {};
    (operations[r.path] as Partial<Record<Method, ApiOperation>>)[r.method.toLowerCase() as Method] = r.operation;
  }
  return operations;
}

/** A domain refusal (its code one of the API's) as the API's error, anything else rethrown. */
export function refusal<E extends Error & { code: ConstructorParameters<typeof ApiError>[0] }>(
  kind: abstract new (...args: never[]) => E,
): (error: unknown) => never {
  return (error) => {
    if (error instanceof kind) throw new ApiError(error.code, error.message);
    throw error;
  };
}
