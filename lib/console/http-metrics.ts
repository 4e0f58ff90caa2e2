import { Histogram, Registry } from "prom-client";

declare global {
  var __onceboardConsoleRegistry: Registry | undefined;
  var __onceboardConsoleHttp: Histogram<"route" | "method" | "status"> | undefined;
}

/**
 * The console's own metrics (GET /api/metrics): HTTP request durations per route. Anchored on
 * globalThis: Next.js loads route handlers as separate module copies, which would otherwise each
 * register (and expose only) their own histogram.
 */
export function consoleRegistry(): Registry {
  globalThis.__onceboardConsoleRegistry ??= new Registry();
  return globalThis.__onceboardConsoleRegistry;
}

function httpHistogram(): Histogram<"route" | "method" | "status"> {
  globalThis.__onceboardConsoleHttp ??= new Histogram({
    name: "onceboard_console_http_request_duration_seconds",
    help: "Console HTTP request durations by route template, method and status.",
    labelNames: ["route", "method", "status"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [consoleRegistry()],
  });
  return globalThis.__onceboardConsoleHttp;
}

/** Wraps a route handler to time it; `route` is the template (/api/v1/overview), never the raw URL. */
export function withHttpMetrics<A extends unknown[]>(
  route: string,
  handler: (request: Request, ...rest: A) => Promise<Response>,
): (request: Request, ...rest: A) => Promise<Response> {
  return async (request, ...rest) => {
    const end = httpHistogram().startTimer({ route, method: request.method });
    let status = 500;
    try {
      const response = await handler(request, ...rest);
      status = response.status;
      return response;
    } finally {
      end({ status: String(status) });
    }
  };
}

/** The exposition text of the console's registry. */
export async function consoleMetricsText(): Promise<{ body: string; contentType: string }> {
  httpHistogram();
  const registry = consoleRegistry();
  return { body: await registry.metrics(), contentType: registry.contentType };
}
