import path from "node:path";
import { operationFor } from "@/lib/routes/openapi";

type Handler = (request: Request, context: { params: Promise<Record<string, unknown>> }) => Promise<Response>;

const APP = path.resolve(import.meta.dirname, "../../app");

/**
 * The route file Next would pick for `pathname`: the documented operation's template
 * (/api/v1/effects/{key} → app/api/v1/effects/[key]/route.ts), the console's /api/metrics, or the
 * catch-all for any other /api/v1 path. So every documented route can be called in-process, and a
 * new one needs no entry here.
 */
function routeFileFor(method: string, pathname: string): { file: string; params: Record<string, string> } | undefined {
  const documented = operationFor(method, pathname);
  if (documented) {
    const dir = documented.template.replace(/^\//, "").replace(/\{(\w+)\}/g, "[$1]");
    return { file: path.join(APP, dir, "route.ts"), params: documented.params };
  }
  if (pathname === "/api/metrics") return { file: path.join(APP, "api/metrics/route.ts"), params: {} };
  if (pathname.startsWith("/api/v1/")) {
    // An undocumented method of a documented path reaches that route's 405; any other path the catch-all.
    for (const m of ["GET", "POST", "PUT", "PATCH", "DELETE"]) {
      if (operationFor(m, pathname)) return routeFileFor(m, pathname);
    }
    return { file: path.join(APP, "api/v1/[...path]/route.ts"), params: {} };
  }
  return undefined;
}

/**
 * Calls the App Router handler Next would pick, in-process: withAuth, zod, the lib call and the
 * JSON out, without a build.
 */
export async function call(
  method: string,
  pathOrUrl: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<{ status: number; text: string; headers: Headers }> {
  const url = new URL(pathOrUrl, "http://console.test");
  const route = routeFileFor(method, url.pathname);
  if (!route) throw new Error(`no handler for ${method} ${url.pathname}`);
  const handlers = (await import(route.file)) as Record<string, Handler | undefined>;
  const handler = handlers[method.toUpperCase()];
  if (!handler) throw new Error(`${route.file} has no ${method} handler`);
  const init: RequestInit = { method, headers: { host: "console.test", ...headers } };
  if (body !== undefined) {
    // A string is sent as it is (a test of a malformed body); anything else as JSON.
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    init.headers = { ...init.headers, "content-type": "application/json" };
  }
  const response = await handler(new Request(url, init), {
    params: Promise.resolve(route.params),
  });
  return { status: response.status, text: await response.text(), headers: response.headers };
}

/** The documented operations (`GET /api/v1/effects/{key}`) whose 200 answer has been checked against its schema. */
export const CHECKED_OPERATIONS = new Set<string>();

/**
 * `call`, and a 200 answer checked against the response schema its operation documents (the
 * schema the OpenAPI document is generated from): a route answering other than its contract
 * fails the test that called it, naming the fields.
 */
export async function callDocumented(
  method: string,
  pathOrUrl: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<{ status: number; text: string; headers: Headers }> {
  const response = await call(method, pathOrUrl, headers, body);
  const documented = operationFor(method, new URL(pathOrUrl, "http://console.test").pathname);
  if (documented) {
    const operation = documented.operation;
    const schema =
      response.status === (operation.status ?? 200)
        ? operation.response
        : operation.alsoAnswers?.find((also) => also.status === response.status)?.response;
    if (schema !== undefined && schema !== "text") {
      const parsed = schema.safeParse(JSON.parse(response.text));
      if (!parsed.success)
        throw new Error(`${method} ${pathOrUrl} answered outside its documented schema: ${parsed.error.message}`);
      CHECKED_OPERATIONS.add(`${method.toUpperCase()} ${documented.template}`);
    }
    if (schema === "text") CHECKED_OPERATIONS.add(`${method.toUpperCase()} ${documented.template}`);
  }
  return response;
}
