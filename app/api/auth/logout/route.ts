import { ApiError, errorResponse } from "@/lib/api/errors";
import { audit } from "@/lib/auth/audit";
import { authenticate, databaseError } from "@/lib/auth/authenticate";
import { clientIp, servedOverHttps } from "@/lib/auth/client-ip";
import { csrfProblem } from "@/lib/auth/csrf";
import { endSessionUrl, oidcSettings } from "@/lib/auth/oidc-client";
import { clearSessionCookieHeader, endSession, readSessionCookie } from "@/lib/auth/session";
import { ConsoleError } from "@/lib/console/errors";

export const dynamic = "force-dynamic";

/**
 * POST /api/auth/logout → 303 to /login, the session revoked on the server (a replayed cookie is
 * refused from then on) and its cookie cleared (same-origin only). When the database cannot be
 * reached the session cannot be revoked: the cookie is still cleared, and the answer says so
 * (/login?reason=logout-unavailable), so nobody leaves believing a copied cookie is dead.
 * A session signed in through the identity provider goes on to the provider's end_session_endpoint
 * (RP-initiated logout, with id_token_hint and post_logout_redirect_uri), when it offers one, so the
 * person is signed out there too; when the provider cannot be reached the console's session is
 * ended all the same, and the answer is /login.
 */
export async function POST(request: Request): Promise<Response> {
  try {
    const csrf = csrfProblem(request, "session");
    if (csrf) throw new ApiError("FORBIDDEN", csrf);
    const secure = servedOverHttps(request.headers);
    let location = "/login";
    try {
      const auth = await authenticate(request.headers);
      const ended = await endSession(readSessionCookie(request.headers.get("cookie")));
      const settings = oidcSettings();
      if (ended.idToken && settings) {
        const url = await endSessionUrl(settings, ended.idToken).catch(() => null);
        if (url) location = url.href;
      }
      if (auth) {
        await audit({
          principal: auth.principal,
          action: "logout",
          tenantId: auth.principal.tenantId,
          result: "ok",
          ip: clientIp(request),
        });
      }
    } catch (error) {
      if (!(databaseError(error) instanceof ConsoleError)) throw error;
      location = "/login?reason=logout-unavailable";
    }
    const response = new Response(null, { status: 303, headers: { location, "cache-control": "no-store" } });
    response.headers.append("set-cookie", clearSessionCookieHeader(secure));
    return response;
  } catch (error) {
    return errorResponse(databaseError(error));
  }
}
