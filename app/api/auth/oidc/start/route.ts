import { errorResponse } from "@/lib/api/errors";
import { databaseError } from "@/lib/auth/authenticate";
import { servedOverHttps } from "@/lib/auth/client-ip";
import { oidcSettings } from "@/lib/auth/oidc-client";
import { flowCookieHeader } from "@/lib/auth/oidc-flow";
import { startOidcSignIn } from "@/lib/auth/oidc-sign-in";
import { nextPathOrDefault } from "@/lib/auth/safe-next";

export const dynamic = "force-dynamic";

/**
 * GET /api/auth/oidc/start?next=<path> → 302 to the identity provider's authorization endpoint
 * (code flow, PKCE, state, nonce), with the flow's cookie. Public: it is how one gets a session.
 * A browser navigation, not a JSON API route: without OIDC configured, or with the provider
 * unreachable, it goes back to the sign-in page with the reason.
 */
export async function GET(request: Request): Promise<Response> {
  try {
    const settings = oidcSettings();
    if (!settings) return redirect("/login?reason=sso-unconfigured");
    const next = nextPathOrDefault(new URL(request.url).searchParams.get("next"));
    let started: Awaited<ReturnType<typeof startOidcSignIn>>;
    try {
      started = await startOidcSignIn(settings, next);
    } catch {
      return redirect("/login?reason=sso-unavailable");
    }
    const response = redirect(started.location.href);
    response.headers.append("set-cookie", flowCookieHeader(started.flow, servedOverHttps(request.headers)));
    return response;
  } catch (error) {
    return errorResponse(databaseError(error));
  }
}

function redirect(location: string): Response {
  return new Response(null, { status: 302, headers: { location, "cache-control": "no-store" } });
}
