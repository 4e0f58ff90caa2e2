import { ApiError, errorResponse } from "../api/errors";
import { principalKey } from "./auth-types";
import { type Authenticated, authenticate, authenticatedFromMemory, type TokenReader } from "./authenticate";
import { clientIpOf } from "./client-ip";
import { getRateLimits, type RateDecision, type RateLimits } from "./rate-limit";

export type GuardResult =
  | { kind: "authenticated"; auth: Authenticated }
  | { kind: "unauthenticated" }
  | { kind: "rate-limited"; decision: RateDecision; reason: string };

interface GuardOptions {
  db?: TokenReader;
  limits?: RateLimits;
  now?: Date;
}

/**
 * Who a request is, and whether its address or token may ask again: the one sequence the proxy
 * (every page and API request) and withAuth (a handler reached without the proxy's answer) both run.
 * A Bearer request from an address whose unknown tokens used up the sign-in limit is refused before
 * its token is looked up; an unknown Bearer token counts against its address; an authenticated
 * request counts against its token and its address. Throws when the database or the rate-limit
 * store cannot answer (the caller fails closed: 503, or a page's outage state).
 */
export async function guardRequest(headers: Headers, options: GuardOptions = {}): Promise<GuardResult> {
  const limits = options.limits ?? getRateLimits();
  const address = clientIpOf(headers);
  const bearer = headers.get("authorization") !== null;
  // A credential this process has just seen pass from this address (and nothing ended or blocked
  // since: lib/auth/auth-cache.ts) is answered from memory; only the request's own count remains.
  const known = options.db === undefined && options.now === undefined ? authenticatedFromMemory(headers) : null;
  if (bearer && !known) {
    const decision = await limits.mayPresentCredentials(address);
    if (!decision.allowed) return { kind: "rate-limited", decision, reason: "too many unknown credentials from this address" };
  }
  const auth = known ?? (await authenticate(headers, options.db, options.now));
  if (!auth) {
    if (!bearer) return { kind: "unauthenticated" };
    const decision = await limits.badCredential(address);
    return decision.allowed
      ? { kind: "unauthenticated" }
      : { kind: "rate-limited", decision, reason: "too many unknown credentials from this address" };
  }
  const decision = await limits.authenticatedRequest(principalKey(auth.principal), address);
  if (!decision.allowed) return { kind: "rate-limited", decision, reason: "too many requests for this token or address" };
  return { kind: "authenticated", auth };
}

/** The API's 429 for a refused request. */
export function rateLimitedResponse(result: { decision: RateDecision; reason: string }): Response {
  const response = errorResponse(
    new ApiError("RATE_LIMITED", `${result.reason}: retry after ${result.decision.retryAfterSeconds} s`),
  );
  response.headers.set("retry-after", String(result.decision.retryAfterSeconds));
  return response;
}

/** The API's 401, naming how to authenticate. */
export function unauthenticatedResponse(): Response {
  const response = errorResponse(
    new ApiError("UNAUTHENTICATED", "authentication required: send Authorization: Bearer <token> or sign in"),
  );
  response.headers.set("www-authenticate", 'Bearer realm="onceboard"');
  return response;
}
