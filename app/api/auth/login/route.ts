import { z } from "zod";
import { ApiError, errorResponse, jsonResponse } from "@/lib/api/errors";
import { readBodyText } from "@/lib/api/parse";
import { databaseError } from "@/lib/auth/authenticate";
import { clientIp, servedOverHttps } from "@/lib/auth/client-ip";
import { csrfProblem } from "@/lib/auth/csrf";
import { rateLimitedResponse } from "@/lib/auth/guard";
import { login } from "@/lib/auth/login";
import { getRateLimits } from "@/lib/auth/rate-limit";
import { DEFAULT_AFTER_SIGN_IN, nextPathOrDefault } from "@/lib/auth/safe-next";
import { sessionCookieHeader } from "@/lib/auth/session";

export const dynamic = "force-dynamic";

/** A sign-in body that is not JSON is refused like a wrong token (401), not described. */
function parseJsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

const body = z.union([z.object({ token: z.string().min(1).max(200) }), z.object({ code: z.string().min(1).max(200) })]);

/**
 * POST /api/auth/login {token} | {code} → 204 + session cookie (httpOnly, SameSite=Strict), or 401.
 * Also accepts the login form (application/x-www-form-urlencoded): then 303 to `next` (a path of
 * this console only, lib/auth/safe-next.ts) or /login?error=1.
 * Public (it is how one gets a session), but same-origin only and rate limited per client address
 * in PostgreSQL; when that limit cannot be read, sign-in is refused (503), not let through unlimited.
 */
export async function POST(request: Request): Promise<Response> {
  try {
    const csrf = csrfProblem(request, "session");
    if (csrf) throw new ApiError("FORBIDDEN", csrf);
    const ip = clientIp(request);
    const rate = await getRateLimits().signInAttempt(ip);
    if (!rate.allowed) return rateLimitedResponse({ decision: rate, reason: "too many sign-in attempts from this address" });
    const isForm = (request.headers.get("content-type") ?? "").includes("application/x-www-form-urlencoded");
    const text = await readBodyText(request);
    const raw: Record<string, unknown> | null = isForm
      ? Object.fromEntries(new URLSearchParams(text))
      : (parseJsonOrNull(text) as Record<string, unknown> | null);
    const next = isForm ? nextPathOrDefault(raw?.next) : DEFAULT_AFTER_SIGN_IN;
    const parsed = body.safeParse(isForm ? { token: raw?.token } : raw);
    const result = parsed.success ? await login({ ...parsed.data, ip }) : null;
    const secure = servedOverHttps(request.headers);
    if (isForm) {
      const location = result
        ? next
        : `/login?error=1${next !== DEFAULT_AFTER_SIGN_IN ? `&next=${encodeURIComponent(next)}` : ""}`;
      const response = new Response(null, { status: 303, headers: { location, "cache-control": "no-store" } });
      if (result) response.headers.append("set-cookie", sessionCookieHeader(result.cookieValue, result.expiresAt, secure));
      return response;
    }
    if (!result) throw new ApiError("UNAUTHENTICATED", "sign-in refused: the token or link is unknown, revoked, expired or used");
    const response = jsonResponse({
      actor: result.principal.actor,
      role: result.principal.role,
      tenantId: result.principal.tenantId,
    });
    response.headers.append("set-cookie", sessionCookieHeader(result.cookieValue, result.expiresAt, secure));
    return response;
  } catch (error) {
    return errorResponse(databaseError(error));
  }
}
