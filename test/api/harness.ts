import * as consoleMetricsRoute from "@/app/api/metrics/route";
import * as unknownRoute from "@/app/api/v1/[...path]/route";
import * as auditRoute from "@/app/api/v1/audit/route";
import * as releaseRoute from "@/app/api/v1/effects/[key]/release/route";
import * as effectRoute from "@/app/api/v1/effects/[key]/route";
import * as effectsRoute from "@/app/api/v1/effects/route";
import * as openapiRoute from "@/app/api/v1/openapi.json/route";
import * as overviewRoute from "@/app/api/v1/overview/route";
import * as findingAcknowledgeRoute from "@/app/api/v1/reconciliation/findings/[id]/acknowledge/route";
import * as findingResolveRoute from "@/app/api/v1/reconciliation/findings/[id]/resolve/route";
import * as findingRoute from "@/app/api/v1/reconciliation/findings/[id]/route";
import * as findingsRoute from "@/app/api/v1/reconciliation/findings/route";
import * as reconciliationRunsRoute from "@/app/api/v1/reconciliation/runs/route";
import * as retentionPlanRoute from "@/app/api/v1/retention/plan/route";
import * as retentionRoute from "@/app/api/v1/retention/route";
import * as violationsRoute from "@/app/api/v1/violations/route";
import * as workerMetricsRoute from "@/app/api/v1/workers/[index]/metrics/route";

type Handler = (request: Request, context: { params: Promise<Record<string, unknown>> }) => Promise<Response>;

/**
 * Routes a request to the App Router handler Next would pick (same table as app/api/v1), so the
 * API can be tested in-process: withAuth, zod, the lib call and the JSON out, without a build.
 */
export function handlerFor(method: string, pathname: string): Handler | undefined {
  const m = method.toUpperCase() as "GET" | "POST";
  const segments = pathname.split("/").filter((s) => s !== "");
  const route =
    pathname === "/api/v1/effects"
      ? effectsRoute
      : /^\/api\/v1\/effects\/[^/]+$/.test(pathname)
        ? effectRoute
        : /^\/api\/v1\/effects\/[^/]+\/release$/.test(pathname)
          ? releaseRoute
          : pathname === "/api/v1/audit"
            ? auditRoute
            : pathname === "/api/v1/overview"
              ? overviewRoute
              : pathname === "/api/v1/openapi.json"
                ? openapiRoute
                : pathname === "/api/v1/violations"
                  ? violationsRoute
                  : pathname === "/api/v1/retention"
                    ? retentionRoute
                    : pathname === "/api/v1/retention/plan"
                      ? retentionPlanRoute
                      : /^\/api\/v1\/workers\/[^/]+\/metrics$/.test(pathname)
                        ? workerMetricsRoute
                        : pathname === "/api/metrics"
                          ? consoleMetricsRoute
                          : pathname === "/api/v1/reconciliation/runs"
                            ? reconciliationRunsRoute
                            : pathname === "/api/v1/reconciliation/findings"
                              ? findingsRoute
                              : /^\/api\/v1\/reconciliation\/findings\/[^/]+$/.test(pathname)
                                ? findingRoute
                                : /^\/api\/v1\/reconciliation\/findings\/[^/]+\/acknowledge$/.test(pathname)
                                  ? findingAcknowledgeRoute
                                  : /^\/api\/v1\/reconciliation\/findings\/[^/]+\/resolve$/.test(pathname)
                                    ? findingResolveRoute
                                    : segments[0] === "api" && segments[1] === "v1"
                                      ? unknownRoute
                                      : undefined;
  return (route as Record<string, Handler | undefined> | undefined)?.[m];
}

export async function call(
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<{ status: number; text: string; headers: Headers }> {
  const url = new URL(path, "http://console.test");
  const handler = handlerFor(method, url.pathname);
  if (!handler) throw new Error(`no handler for ${method} ${url.pathname}`);
  // The dynamic segments the in-process routes read from params (the others parse the path).
  const worker = /^\/api\/v1\/workers\/([^/]+)\/metrics$/.exec(url.pathname)?.[1];
  const finding = /^\/api\/v1\/reconciliation\/findings\/([^/]+)(?:\/[^/]+)?$/.exec(url.pathname)?.[1];
  const params = worker !== undefined ? { index: worker } : finding !== undefined ? { id: decodeURIComponent(finding) } : {};
  const init: RequestInit =
    body === undefined
      ? { method, headers: { host: "console.test", ...headers } }
      : {
          method,
          headers: { host: "console.test", "content-type": "application/json", ...headers },
          body: typeof body === "string" ? body : JSON.stringify(body),
        };
  const response = await handler(new Request(url, init), { params: Promise.resolve(params) });
  return { status: response.status, text: await response.text(), headers: response.headers };
}
