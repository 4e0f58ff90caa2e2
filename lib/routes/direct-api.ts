import type { IncomingMessage, ServerResponse } from "node:http";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { errorResponse } from "../api/errors";
import type { DeclaredRoute } from "../auth/declare-route";
import { HANDOVER_HEADER } from "../auth/proxy-handover";
import { contentSecurityPolicy, markFrontDoorResponse, newNonce } from "../auth/security-headers";
import { loadConfig } from "../config";
import { getEffectRoute, searchEffectsRoute } from "../features/keys-and-effects/routes";

/**
 * The key lookup and the fragment search, answered by the console's own server
 * (scripts/console-server.ts) without Next.js's router. They are what an on-call engineer asks in
 * a loop ("did this run twice?"), and a request through Next.js's proxy adapter, router and route
 * runtime costs 2.8–4.3 ms of CPU before any of the console's code runs (docs/benchmarks.md, issue
 * 42): more than PostgreSQL spends on the lookup's statements.
 *
 * Nothing the front door does is skipped, and none of it is written twice: the route's declared
 * handler is the one app/api/v1/effects/** serves, and its withAuth runs the guard proxy.ts runs
 * (who, the shared rate limits, fail closed with a 503); the response gets proxy.ts's headers
 * (markFrontDoorResponse). A client's copy of the proxy's handover header is dropped, as the proxy
 * drops it. Only a request whose path the router would give these routes unchanged is taken: a
 * trailing slash, a dot segment, a backslash, a malformed escape, an absolute URL, HEAD or another
 * method goes on to Next.js, which answers it as it always did. As Next.js does, an answer of
 * 1 KiB or more is gzipped for a client that accepts it (a browser, fetch); one that does not
 * (curl, node:http) gets it as it is.
 */
/** The search's path as its route declares it; the lookup's is this and one segment, its {key}. */
const EFFECTS_PATH = searchEffectsRoute.path;
/** The smallest answer worth compressing: Next.js's (its `compression` middleware's default). */
const COMPRESS_FROM_BYTES = 1024;
const gzipped = promisify(gzip);

interface DirectMatch {
  route: DeclaredRoute;
  params: Record<string, string>;
}

/** The route this request is for, when it is one answered here, or null. */
export function directRouteFor(method: string | undefined, target: string | undefined): DirectMatch | null {
  if (method !== "GET" || !target) return null;
  const queryAt = target.indexOf("?");
  const pathname = queryAt < 0 ? target : target.slice(0, queryAt);
  if (pathname === EFFECTS_PATH) return { route: searchEffectsRoute, params: {} };
  if (!pathname.startsWith(`${EFFECTS_PATH}/`)) return null;
  const segment = pathname.slice(EFFECTS_PATH.length + 1);
  if (segment === "" || segment.includes("/")) return null;
  let key: string;
  try {
    key = decodeURIComponent(segment);
  } catch {
    return null;
  }
  // What a URL parser would rewrite (%2e%2e, a backslash) is left to the router that resolves it.
  if (new URL(pathname, "http://path.invalid").pathname !== pathname) return null;
  return { route: getEffectRoute, params: { key } };
}

function webRequest(request: IncomingMessage, target: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name.startsWith(":")) continue;
    if (Array.isArray(value)) for (const each of value) headers.append(name, each);
    else headers.set(name, value);
  }
  headers.delete(HANDOVER_HEADER);
  return new Request(new URL(target, `http://${request.headers.host ?? "localhost"}`), { method: "GET", headers });
}

async function respond(match: DirectMatch, request: Request, response: ServerResponse): Promise<void> {
  // Only the console's production server (scripts/console-server.ts) answers directly: no dev CSP.
  const csp = contentSecurityPolicy(newNonce(), false);
  const mark = (answer: Response) => markFrontDoorResponse(answer, request.headers, csp, { cacheable: false });
  try {
    let answer: Response;
    try {
      answer = mark(await match.route.handler(request, { params: Promise.resolve(match.params) }));
    } catch (error) {
      answer = mark(errorResponse(error));
    }
    const plain = Buffer.from(await answer.arrayBuffer());
    const compress = plain.length >= COMPRESS_FROM_BYTES && acceptsGzip(request.headers.get("accept-encoding"));
    const body = compress ? await gzipped(plain) : plain;
    // Nothing is set on the response before this point, so the catch below starts from a clean one.
    response.statusCode = answer.status;
    for (const [name, value] of answer.headers) if (name !== "set-cookie") response.setHeader(name, value);
    const cookies = answer.headers.getSetCookie();
    if (cookies.length > 0) response.setHeader("set-cookie", cookies);
    if (compress) {
      response.setHeader("content-encoding", "gzip");
      response.setHeader("vary", "Accept-Encoding");
    }
    response.setHeader("content-length", body.length);
    response.end(body);
  } catch (error) {
    // Only writing the answer can fail here (the handler's errors are answers): a 500 if nothing went out yet.
    if (response.headersSent) response.destroy(error instanceof Error ? error : undefined);
    else {
      const failed = mark(errorResponse(error));
      response.writeHead(failed.status, Object.fromEntries(failed.headers));
      response.end(await failed.text());
    }
  }
}

/** Whether an Accept-Encoding header allows gzip: named with a q above 0, or not named and `*` allowed. */
export function acceptsGzip(header: string | null): boolean {
  if (!header) return false;
  let gzipQ: number | undefined;
  let anyQ: number | undefined;
  for (const part of header.split(",")) {
    const [coding = "", ...params] = part.split(";").map((piece) => piece.trim().toLowerCase());
    const weight = params.find((param) => param.startsWith("q="));
    const q = weight === undefined ? 1 : Number(weight.slice(2));
    if (coding === "gzip") gzipQ = q;
    else if (coding === "*") anyQ = q;
  }
  return (gzipQ ?? anyQ ?? 0) > 0;
}

/**
 * Answers the request here and returns true when it is one of the routes above; false, with
 * nothing written, for everything else (the caller hands it to Next.js).
 */
export function answerDirectly(request: IncomingMessage, response: ServerResponse): boolean {
  const target = request.url;
  const match = directRouteFor(request.method, target);
  if (!match || !target) return false;
  let forward: Request;
  try {
    forward = webRequest(request, target);
  } catch {
    // A Host or header a web Request cannot carry: Next.js answers it, as before.
    return false;
  }
  void respond(match, forward, response);
  return true;
}

declare global {
  var __onceboardDirectApi: typeof answerDirectly | undefined;
}

/**
 * Called from instrumentation-node.ts, so the routes run from Next.js's build, with the state the rest
 * of the console keeps on globalThis (the pool, the auth cache, the metrics registry); the
 * console's server finds the function there. ONCEBOARD_DIRECT_API=off leaves every request to Next.js.
 */
export function installDirectApi(): void {
  globalThis.__onceboardDirectApi = loadConfig().ONCEBOARD_DIRECT_API === "on" ? answerDirectly : undefined;
}
