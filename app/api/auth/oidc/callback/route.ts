import { errorResponse } from "@/lib/api/errors";
import { databaseError } from "@/lib/auth/authenticate";
import { clientIp, servedOverHttps } from "@/lib/auth/client-ip";
import { rateLimitedResponse } from "@/lib/auth/guard";
import { oidcSettings } from "@/lib/auth/oidc-client";
import { clearFlowCookieHeader } from "@/lib/auth/oidc-flow";
import { completeOidcSignIn } from "@/lib/auth/oidc-sign-in";
import { getRateLimits } from "@/lib/auth/rate-limit";
import { sessionCookieHeader } from "@/lib/auth/session";

export const dynamic = "force-dynamic";

/**
 * GET /api/auth/oidc/callback?code=…&state=… — where the identity provider sends the browser back.
 * Signed in: 200 with the session cookie and a page that opens `next` (see below). No mapped role:
 * 303 to /no-access, no session. Anything else (a wrong state, a replayed code, an expired or
 * forged ID token, an error from the provider): 303 to /login?reason=sso-refused. The flow's cookie
 * is cleared whatever happened. Public, rate limited per address like the token sign-in.
 */
export async function GET(request: Request): Promise<Response> {
  try {
    const secure = servedOverHttps(request.headers);
    const settings = oidcSettings();
    if (!settings) return redirect("/login?reason=sso-unconfigured", secure);
    const ip = clientIp(request);
    const rate = await getRateLimits().signInAttempt(ip);
    if (!rate.allowed) return rateLimitedResponse({ decision: rate, reason: "too many sign-in attempts from this address" });
    // The mapping file is read at each sign-in, so an edited file applies without a restart; a file
    // broken since `npm start` checked it refuses sign-in with the variable's name (500 CONFIG_INVALID).
    const result = await completeOidcSignIn(settings, {
      search: new URL(request.url).search,
      cookieHeader: request.headers.get("cookie"),
      ip,
    });
    if (result.kind === "no-access") return redirect(`/no-access?reason=${result.reason}`, secure);
    if (result.kind === "refused") return redirect("/login?reason=sso-refused", secure);
    // The browser arrived here from the provider's site: to the browser this navigation is
    // cross-site, and a redirect from it stays so, so the SameSite=Strict session cookie would not
    // be sent with the next page. A page of the console's own that moves on starts a same-site
    // navigation, which carries it.
    const response = new Response(continuePage(result.next), {
      status: 200,
      headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" },
    });
    response.headers.append("set-cookie", sessionCookieHeader(result.cookieValue, result.expiresAt, secure));
    response.headers.append("set-cookie", clearFlowCookieHeader(secure));
    return response;
  } catch (error) {
    return errorResponse(databaseError(error));
  }
}

function redirect(location: string, secure: boolean): Response {
  const response = new Response(null, { status: 303, headers: { location, "cache-control": "no-store" } });
  response.headers.append("set-cookie", clearFlowCookieHeader(secure));
  return response;
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);

/** `next` is a path of this console (lib/auth/safe-next.ts, checked when the flow began). */
function continuePage(next: string): string {
  const href = escapeHtml(next);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=${href}"><title>Signed in · Onceboard</title></head>
<body><main><p>Signed in. <a href="${href}">Continue to the console</a>.</p></main></body></html>`;
}
