import { ApiError, errorResponse } from "../api/errors";
import { audit } from "./audit";
import { type Principal, type Role, roleAtLeast } from "./auth-types";
import { type Authenticated, databaseError } from "./authenticate";
import { clientIp } from "./client-ip";
import { csrfProblem, isStateChanging } from "./csrf";
import { guardRequest, rateLimitedResponse, unauthenticatedResponse } from "./guard";
import { takeOver } from "./proxy-handover";
import { consoleReadOnly, READ_ONLY_MESSAGE } from "./read-only";
import { Scope } from "./scope";

/** What a wrapped handler receives besides the request. */
interface AuthContext<P> {
  principal: Principal;
  /** What the handler may read: the principal's tenant, or the platform (narrow it with ?tenant=). */
  scope: Scope;
  params: P;
  /** The client address, for the audit log. */
  ip: string | null;
}

type NextRouteContext<P> = { params: Promise<P> };

/** Marks handlers that went through withAuth, so a test can prove every API route does. */
const WITH_AUTH = Symbol.for("onceboard.withAuth");

/**
 * The one seam every /api/v1 route goes through (the proxy in proxy.ts is the second lock):
 * 1. who, and how often: lib/auth/guard.ts (Bearer token or server-side session, rate limits per
 *    token and address) → else 401 or 429 with Retry-After (the proxy's answer for this very
 *    request when it handed one over, lib/auth/proxy-handover.ts);
 * 2. CSRF: a state-changing request must come from the console's own origin → else 403;
 * 3. role: at least `role` → else 403;
 * 4. CONSOLE_READ_ONLY: a state-changing request → 403 (lib/auth/read-only.ts); a refused write
 *    (2, 3 or 4) is audited;
 * then the handler, its answer marked Cache-Control: no-store; anything it throws becomes the
 * JSON error of lib/api/errors.ts.
 *
 *   export const GET = withAuth("viewer", async (request, { principal, params }) => Response)
 */
export function withAuth<P = Record<string, string>>(
  role: Role,
  handler: (request: Request, context: AuthContext<P>) => Promise<Response>,
): (request: Request, context: NextRouteContext<P>) => Promise<Response> {
  const wrapped = async (request: Request, context: NextRouteContext<P>): Promise<Response> => {
    try {
      let auth = takeOver(request.headers);
      if (!auth) {
        const guarded = await guardRequest(request.headers);
        if (guarded.kind === "rate-limited") return rateLimitedResponse(guarded);
        if (guarded.kind === "unauthenticated") return unauthenticatedResponse();
        auth = guarded.auth;
      }
      const csrf = csrfProblem(request, auth.via);
      const refusal = csrf
        ? csrf
        : !roleAtLeast(auth.principal.role, role)
          ? `this needs the ${role} role; the token has ${auth.principal.role}`
          : isStateChanging(request.method) && consoleReadOnly()
            ? READ_ONLY_MESSAGE
            : null;
      if (refusal) {
        if (isStateChanging(request.method)) await auditRefusedWrite(request, auth, refusal);
        throw new ApiError("FORBIDDEN", refusal);
      }
      const params = ((await context?.params) ?? {}) as P;
      const response = await handler(request, {
        principal: auth.principal,
        scope: Scope.ofPrincipal(auth.principal),
        params,
        ip: clientIp(request),
      });
      // An authenticated answer is this principal's: no shared or browser cache may keep it.
      return noStore(response);
    } catch (error) {
      return errorResponse(databaseError(error));
    }
  };
  Object.defineProperty(wrapped, WITH_AUTH, { value: role });
  return wrapped;
}

function noStore(response: Response): Response {
  try {
    response.headers.set("cache-control", "no-store");
    return response;
  } catch {
    // Response.redirect() and fetched responses have immutable headers: copy, then mark.
    const copy = new Response(response.body, response);
    copy.headers.set("cache-control", "no-store");
    return copy;
  }
}

/** A write refused for its role or its origin, in the audit log: who tried what, and why not. */
async function auditRefusedWrite(request: Request, auth: Authenticated, reason: string): Promise<void> {
  const url = new URL(request.url);
  await audit({
    principal: auth.principal,
    action: "write.refused",
    tenantId: auth.principal.tenantId,
    target: `${request.method.toUpperCase()} ${url.pathname}`.slice(0, 500),
    result: "refused",
    detail: { reason },
    ip: clientIp(request),
  });
}
