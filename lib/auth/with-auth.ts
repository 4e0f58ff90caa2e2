import { ApiError, errorResponse } from "../api/errors";
import { type Principal, type Role, roleAtLeast } from "./auth-types";
import { authenticate, databaseError } from "./authenticate";
import { clientIp } from "./client-ip";
import { csrfProblem } from "./csrf";
import { takeOver } from "./proxy-handover";
import { takeToken } from "./rate-limit";
import { Scope } from "./scope";

/** What a wrapped handler receives besides the request. */
export interface AuthContext<P> {
  principal: Principal;
  /** What the handler may read: the principal's tenant, or the platform (narrow it with ?tenant=). */
  scope: Scope;
  params: P;
  /** The client address, for the audit log. */
  ip: string | null;
}

type NextRouteContext<P> = { params: Promise<P> };

/** Marks handlers that went through withAuth, so a test can prove every API route does. */
export const WITH_AUTH = Symbol.for("onceboard.withAuth");

/**
 * The one seam every /api/v1 route goes through (the proxy in proxy.ts is the second lock):
 * 1. who: Bearer token or session cookie, token neither revoked nor expired → else 401 (the proxy's
 *    answer for this very request when it handed one over, lib/auth/proxy-handover.ts);
 * 2. CSRF: a state-changing request must come from the console's own origin → else 403;
 * 3. role: at least `role` → else 403;
 * 4. rate: per-token token bucket → else 429 with Retry-After;
 * then the handler; anything it throws becomes the JSON error of lib/api/errors.ts.
 *
 *   export const GET = withAuth("viewer", async (request, { principal, params }) => Response)
 */
export function withAuth<P = Record<string, string>>(
  role: Role,
  handler: (request: Request, context: AuthContext<P>) => Promise<Response>,
): (request: Request, context: NextRouteContext<P>) => Promise<Response> {
  const wrapped = async (request: Request, context: NextRouteContext<P>): Promise<Response> => {
    try {
      const auth = takeOver(request.headers) ?? (await authenticate(request.headers));
      if (!auth) {
        const response = errorResponse(
          new ApiError("UNAUTHENTICATED", "authentication required: send Authorization: Bearer <token> or sign in"),
        );
        response.headers.set("www-authenticate", 'Bearer realm="onceboard"');
        return response;
      }
      const csrf = csrfProblem(request, auth.via);
      if (csrf) throw new ApiError("FORBIDDEN", csrf);
      if (!roleAtLeast(auth.principal.role, role)) {
        throw new ApiError("FORBIDDEN", `this needs the ${role} role; the token has ${auth.principal.role}`);
      }
      const rate = takeToken(auth.principal.tokenId);
      if (!rate.allowed) {
        const response = errorResponse(
          new ApiError("RATE_LIMITED", `too many requests for this token: retry after ${rate.retryAfterSeconds} s`),
        );
        response.headers.set("retry-after", String(rate.retryAfterSeconds));
        return response;
      }
      const params = ((await context?.params) ?? {}) as P;
      return await handler(request, {
        principal: auth.principal,
        scope: Scope.ofPrincipal(auth.principal),
        params,
        ip: clientIp(request),
      });
    } catch (error) {
      return errorResponse(databaseError(error));
    }
  };
  Object.defineProperty(wrapped, WITH_AUTH, { value: role });
  return wrapped;
}
