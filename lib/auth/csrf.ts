/**
 * CSRF check for state-changing requests. A browser always sends Sec-Fetch-Site (and Origin on a
 * POST); either one naming another site is refused. Requests carrying neither come from a
 * non-browser client; those are refused too when they ride on a session cookie (an old browser),
 * and allowed with a Bearer token (a cross-site page cannot set Authorization without CORS).
 */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export function isStateChanging(method: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase());
}

/** null when the request may proceed, else why it is refused. */
export function csrfProblem(request: Request, via: "bearer" | "session" | "none"): string | null {
  if (!isStateChanging(request.method)) return null;
  const site = request.headers.get("sec-fetch-site");
  if (site && site !== "same-origin" && site !== "none") return `cross-site request refused (Sec-Fetch-Site: ${site})`;
  const origin = request.headers.get("origin");
  if (origin) {
    const host = request.headers.get("x-forwarded-host") ?? request.headers.get("host");
    let originHost: string;
    try {
      originHost = new URL(origin).host;
    } catch {
      return "cross-site request refused (malformed Origin)";
    }
    if (!host || originHost !== host) return "cross-site request refused (Origin does not match the console)";
  }
  if (!site && !origin && via === "session") return "request refused: a session request must carry Origin or Sec-Fetch-Site";
  return null;
}
