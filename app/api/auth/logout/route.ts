import { ApiError, errorResponse } from "@/lib/api/errors";
import { audit } from "@/lib/auth/audit";
import { authenticate } from "@/lib/auth/authenticate";
import { clientIp } from "@/lib/auth/client-ip";
import { csrfProblem } from "@/lib/auth/csrf";
import { clearSessionCookieHeader } from "@/lib/auth/session";

export const dynamic = "force-dynamic";

/** POST /api/auth/logout → 303 to /login with the session cookie cleared (same-origin only). */
export async function POST(request: Request): Promise<Response> {
  try {
    const csrf = csrfProblem(request, "session");
    if (csrf) throw new ApiError("FORBIDDEN", csrf);
    const auth = await authenticate(request.headers).catch(() => null);
    if (auth) {
      await audit({
        principal: auth.principal,
        action: "logout",
        tenantId: auth.principal.tenantId,
        result: "ok",
        ip: clientIp(request),
      }).catch(() => {});
    }
    const response = new Response(null, { status: 303, headers: { location: "/login", "cache-control": "no-store" } });
    response.headers.append("set-cookie", clearSessionCookieHeader(new URL(request.url).protocol === "https:"));
    return response;
  } catch (error) {
    return errorResponse(error);
  }
}
