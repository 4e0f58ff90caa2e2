import { type NextRequest, NextResponse } from "next/server";
import { ApiError, errorResponse } from "@/lib/api/errors";
import { PAGE_STATUS_HEADER } from "@/lib/api/page-status";
import { type Authenticated, databaseError } from "@/lib/auth/authenticate";
import { consoleOrigin } from "@/lib/auth/client-ip";
import { type GuardResult, guardRequest, rateLimitedResponse, unauthenticatedResponse } from "@/lib/auth/guard";
import { OIDC_CALLBACK_PATH, OIDC_START_PATH } from "@/lib/auth/oidc-paths";
import { HANDOVER_HEADER, handOver } from "@/lib/auth/proxy-handover";
import { safeNextPath } from "@/lib/auth/safe-next";
import { contentSecurityPolicy, markFrontDoorResponse, newNonce } from "@/lib/auth/security-headers";
import { readSessionCookie, type SessionEndReason, whySessionEnded } from "@/lib/auth/session";
import { consoleDatabase } from "@/lib/console/database";
import { ALERT_RULES } from "@/lib/features/overview/metrics/alert-rules";
import { pageQueryError } from "@/lib/routes/page-queries";

/**
 * The console's front door (Next 16 Proxy, Node.js runtime). Every request but static assets comes
 * through here, so a new page or API route is behind authentication without remembering to be:
 * - /api/** without a valid Bearer token or session → 401 JSON (withAuth checks again, with roles);
 * - any page without a session → redirect to /login?next=<path>;
 * - the rate limits of lib/auth/guard.ts (429), counted here once per request;
 * - when the session or token cannot be read: 503 for the API, /login?reason=unavailable for a page;
 * - public: /login, /api/auth/login, /api/auth/logout, the single sign-on start and callback and its
 *   /no-access page, /api/v1/health (polled by `npm start` and load balancers before anyone can
 *   sign in; it tells whether PostgreSQL answers, nothing else), and STATIC_PATHS: the icons, the
 *   web manifest and robots.txt (cacheable, the same for everyone).
 * Every response gets the security headers (HSTS when served over https) and Cache-Control: no-store;
 * pages get a CSP with a fresh nonce Next applies to its scripts.
 * An API request's answer to "who is this" is handed to withAuth (lib/auth/proxy-handover.ts), so
 * the token is looked up once per request, not twice.
 */
/** public/ and the app's metadata files (app/icon.svg, app/manifest.ts): the same for everyone, before sign-in. */
const STATIC_PATHS = new Set([
  "/icon.svg",
  "/favicon.ico",
  "/apple-touch-icon.png",
  "/icon-192.png",
  "/icon-512.png",
  "/manifest.webmanifest",
  "/robots.txt",
]);
const PUBLIC_PATHS = new Set([
  "/login",
  "/no-access",
  "/api/auth/login",
  "/api/auth/logout",
  OIDC_START_PATH,
  OIDC_CALLBACK_PATH,
  "/api/v1/health",
  ...STATIC_PATHS,
]);
/** The runbook pages that exist: one per alert rule. */
const RUNBOOK_PATH = /^\/overview\/runbook\/([^/]*)\/?$/;
const ALERT_NAMES = new Set(ALERT_RULES.map((rule) => rule.name));

export async function proxy(request: NextRequest) {
  const { pathname, search } = request.nextUrl;
  const nonce = newNonce();
  const csp = contentSecurityPolicy(nonce, process.env.NODE_ENV === "development");
  const isPublic = PUBLIC_PATHS.has(pathname);
  const finish = (response: Response) =>
    markFrontDoorResponse(response, request.headers, csp, { cacheable: STATIC_PATHS.has(pathname) });

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
      return finish(redirectTo(request, loginPath(request, await sessionEndOf(request))));
    }
    auth = guarded.auth;
  }

  // Next decodes a dynamic route's segments before the handler runs and answers a bare text/plain
  // 500 on a malformed escape (`%ZZ`, a truncated UTF-8 sequence); the console answers such a path
  // itself: JSON for the API, a page for a browser, both with the security headers.
  if (!isWellEncoded(pathname)) {
    const error = new ApiError("INVALID_INPUT", "invalid path: not valid percent-encoded UTF-8");
    return finish(isApi ? errorResponse(error) : invalidAddressPage());
  }

  // The Overview's loading state streams before a runbook page runs, so its notFound() would come
  // with a 200: a name that is no alert's is answered as the missing page it is, before rendering.
  const runbook = RUNBOOK_PATH.exec(pathname);
  if (runbook && !ALERT_NAMES.has(decodeURIComponent(runbook[1] ?? ""))) {
    return finish(NextResponse.rewrite(new URL("/runbook-not-found", request.url)));
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
  requestHeaders.delete(PAGE_STATUS_HEADER);
  // A page whose query string is invalid still renders (its chrome, its form and the error beside
  // it), but answers as the 4xx it is. A page cannot set its status once it streams, and a rewrite
  // with a status comes out of Next 16.4.6 as a 500: the status is decided here, from the page's
  // own parser, and the console's server applies it (scripts/console-server.ts). A client-side
  // navigation's RSC fetch keeps its 200, so the router renders the page in place.
  const status =
    !isApi && request.method === "GET" && request.headers.get("rsc") !== "1" ? await pageStatus(request, auth) : null;
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  if (status !== null) response.headers.set(PAGE_STATUS_HEADER, String(status));
  return finish(response);
}

/** The status an invalid page URL answers with (400, or 404 for a job type no worker reported), or null. */
async function pageStatus(request: NextRequest, auth: Authenticated | null): Promise<number | null> {
  if (!auth) return null;
  try {
    const error = await pageQueryError(
      request.nextUrl.pathname,
      request.nextUrl.searchParams,
      { tenantId: auth.principal.tenantId },
      consoleDatabase,
    );
    return error ? error.status : null;
  } catch {
    // The database did not answer the job-type check: the page shows what it can, with its 200.
    return null;
  }
}

/**
 * Why the browser's session cookie signs no one in (revoked, expired, its token revoked), for the
 * sign-in page to say; undefined without a cookie, or when the database cannot say (the page then
 * simply asks to sign in).
 */
async function sessionEndOf(request: NextRequest): Promise<SessionEndReason | undefined> {
  if (request.headers.get("authorization") !== null) return undefined;
  try {
    return (await whySessionEnded(readSessionCookie(request.headers.get("cookie")))) ?? undefined;
  } catch {
    return undefined;
  }
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

/** The 400 page for an address no route can read: static markup, nothing from the request echoed. */
function invalidAddressPage(): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Invalid address · Onceboard</title></head>
<body><main><h1>This address is invalid</h1><p>INVALID_INPUT: the path is not valid percent-encoded UTF-8.</p>
<p><a href="/overview">Open the Overview</a></p></main></body></html>`;
  return new Response(html, {
    status: 400,
    headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
  });
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
