import { type NextRequest, NextResponse } from "next/server";
import { ApiError, errorResponse } from "@/lib/api/errors";
import { type Authenticated, databaseError } from "@/lib/auth/authenticate";
import { consoleOrigin } from "@/lib/auth/client-ip";
import { type GuardResult, guardRequest, rateLimitedResponse, unauthenticatedResponse } from "@/lib/auth/guard";
import { HANDOVER_HEADER, handOver } from "@/lib/auth/proxy-handover";
import { safeNextPath } from "@/lib/auth/safe-next";
import { contentSecurityPolicy, securityHeadersFor } from "@/lib/auth/security-headers";

/**
 * The console's front door (Next 16 Proxy, Node.js runtime). Every request but static assets comes
 * through here, so a new page or API route is behind authentication without remembering to be:
 * - /api/** without a valid Bearer token or session → 401 JSON (withAuth checks again, with roles);
 * - any page without a session → redirect to /login?next=<path>;
 * - the rate limits of lib/auth/guard.ts (429), counted here once per request;
 * - when the session or token cannot be read: 503 for the API, /login?reason=unavailable for a page;
 * - public: /login, /api/auth/login, /api/auth/logout, /api/v1/health (polled by `npm start` and
 *   load balancers before anyone can sign in; it tells whether PostgreSQL answers, nothing else).
 * Every response gets the security headers (HSTS when served over https) and Cache-Control: no-store;
 * pages get a CSP with a fresh nonce Next applies to its scripts.
 * An API request's answer to "who is this" is handed to withAuth (lib/auth/proxy-handover.ts), so
 * the token is looked up once per request, not twice.
 */
const STATIC_PATHS = new Set(["/icon.svg", "/favicon.ico"]);
const PUBLIC_PATHS = new Set(["/login", "/api/auth/login", "/api/auth/logout", "/api/v1/health", ...STATIC_PATHS]);

export async function proxy(request: NextRequest) {
  const { pathname, search } = request.nextUrl;
  const nonce = Buffer.from(crypto.randomUUID()).toString("base64");
  const csp = contentSecurityPolicy(nonce, process.env.NODE_ENV === "development");
  const isPublic = PUBLIC_PATHS.has(pathname);
  const finish = (response: Response) => {
    for (const [name, value] of Object.entries(securityHeadersFor(request.headers))) response.headers.set(name, value);
    response.headers.set("content-security-policy", csp);
    // Everything past the front door is one principal's (or says who may see it): never cached.
    if (!STATIC_PATHS.has(pathname)) response.headers.set("cache-control", "no-store");
    return response;
  };

  const isApi = pathname.startsWith("/api/");
  let auth: Authenticated | null = null;
  if (!isPublic) {
    let guarded: GuardResult;
    try {
      guarded = await guardRequest(request.headers);
    } catch (error) {
      // Fails closed: the session, token or rate limit cannot be read. The API answers with the
      // database's error (503); a page goes to the sign-in page's outage notice, never to its data.
      if (isApi) return finish(errorResponse(databaseError(error)));
      return finish(redirectTo(request, loginPath(request, "unavailable")));
    }
    if (guarded.kind === "rate-limited") {
      if (isApi) return finish(rateLimitedResponse(guarded));
      const seconds = guarded.decision.retryAfterSeconds;
      return finish(
        new Response(`Too many requests (${guarded.reason}): retry after ${seconds} s.\n`, {
          status: 429,
          headers: { "content-type": "text/plain; charset=utf-8", "retry-after": String(seconds) },
        }),
      );
    }
    if (guarded.kind === "unauthenticated") {
      if (isApi) return finish(unauthenticatedResponse());
      return finish(redirectTo(request, loginPath(request)));
    }
    auth = guarded.auth;
  }
  // Next decodes a dynamic route's segments before the handler runs and answers a bare 500 on a
  // malformed escape (`%ZZ`, a truncated UTF-8 sequence); the API answers such a path itself.
  if (isApi && !isWellEncoded(pathname)) {
    return finish(errorResponse(new ApiError("INVALID_INPUT", "invalid path: not valid percent-encoded UTF-8")));
  }

  // The console opens on the Overview: an HTTP redirect here, not a redirect() while the (dynamic)
  // layout streams, which would arrive as a 200 with a client-side redirect.
  if (pathname === "/") return finish(redirectTo(request, "/overview"));

  const requestHeaders = new Headers(request.headers);
  // withAuth takes this answer instead of asking the database again (lib/auth/proxy-handover.ts);
  // a reference the client sent itself is never forwarded.
  requestHeaders.delete(HANDOVER_HEADER);
  if (auth && isApi) requestHeaders.set(HANDOVER_HEADER, handOver(auth, request.headers));
  requestHeaders.set("x-nonce", nonce);
  requestHeaders.set("content-security-policy", csp);
  // Lets requirePageSession send a signed-out reader back to where they were.
  requestHeaders.set("x-onceboard-path", `${pathname}${search}`);
  return finish(NextResponse.next({ request: { headers: requestHeaders } }));
}

/** /login, with the page to come back to (and why, when it is not simply a missing session). */
function loginPath(request: NextRequest, reason?: string): string {
  const { pathname, search } = request.nextUrl;
  const query = new URLSearchParams();
  if (reason) query.set("reason", reason);
  const back = safeNextPath(`${pathname}${search}`);
  if (pathname !== "/" && back) query.set("next", back);
  const text = query.toString();
  return text ? `/login?${text}` : "/login";
}

/**
 * A redirect to a path of the console. Next wants an absolute Location; it is made from the
 * console's own origin (PUBLIC_URL, or the Host the client asked for over its trusted scheme), not
 * from request.url, which Next builds from X-Forwarded-Host and -Proto whoever sent them.
 */
function redirectTo(request: NextRequest, path: string): Response {
  return NextResponse.redirect(new URL(path, consoleOrigin(request.headers) ?? request.nextUrl.origin));
}

function isWellEncoded(pathname: string): boolean {
  try {
    decodeURIComponent(pathname);
    return true;
  } catch {
    return false;
  }
}

export const config = {
  matcher: ["/((?!_next/static|_next/image).*)"],
};
