import { consoleOrigin } from "./client-ip";

/**
 * CSRF check for state-changing requests. A browser sends Sec-Fetch-Site and, on a POST, Origin.
 * - Sec-Fetch-Site naming anything but same-origin (same-site, cross-site, none) is refused for
 *   a cookie: "none" is a navigation the user typed, which never writes.
 * - Origin must equal the console's own origin in full (scheme, host and port): PUBLIC_URL's, or
 *   the request's Host over its trusted scheme (lib/auth/client-ip.ts; X-Forwarded-Host counts only
 *   from a trusted proxy). "null" (a sandboxed or privacy-stripped origin) passes only beside
 *   Sec-Fetch-Site: same-origin.
 * - A cookie write must carry one of the two proofs: a matching Origin or Sec-Fetch-Site: same-origin.
 * A Bearer request carries neither and needs none: a cross-site page cannot set Authorization
 * without CORS, which the console never grants; a Bearer request that does send them is checked.
 */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export function isStateChanging(method: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase());
}

/** null when the request may proceed, else why it is refused. */
export function csrfProblem(request: Request, via: "bearer" | "session" | "none"): string | null {
  if (!isStateChanging(request.method)) return null;
  const site = request.headers.get("sec-fetch-site");
  const byCookie = via !== "bearer";
  if (site && site !== "same-origin" && (byCookie || site !== "none")) {
    return `cross-site request refused (Sec-Fetch-Site: ${site})`;
  }
  const origin = request.headers.get("origin");
  let originMatches = false;
  if (origin !== null && !(origin === "null" && site === "same-origin")) {
    const own = consoleOrigin(request.headers);
    let given: string;
    try {
      given = new URL(origin).origin;
    } catch {
      return "cross-site request refused (malformed Origin)";
    }
    if (own === null || given !== own) return "cross-site request refused (Origin does not match the console)";
    originMatches = true;
  }
  if (byCookie && !originMatches && site !== "same-origin") {
    return "request refused: a session request must carry the console's Origin or Sec-Fetch-Site: same-origin";
  }
  return null;
}
