import { loadConfig } from "../config";
import { servedOverHttps } from "./client-ip";
import { oidcProviderOrigin } from "./oidc-paths";

/**
 * The Content-Security-Policy of every page: scripts only from the console and with this request's
 * nonce. Forms post to the console only, and, with single sign-on, on to the identity provider:
 * the sign-out form's answer redirects there (RP-initiated logout), and a browser holds a form's
 * redirects to form-action too.
 */
export function contentSecurityPolicy(nonce: string, dev: boolean): string {
  const provider = oidcProviderOrigin();
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    // React and recharts set style attributes; styles cannot run code.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    `form-action 'self'${provider ? ` ${provider}` : ""}`,
    "frame-ancestors 'none'",
  ].join("; ");
}

/** A fresh nonce for one response's CSP (Next applies a page's to its scripts). */
export function newNonce(): string {
  return Buffer.from(crypto.randomUUID()).toString("base64");
}

/** Headers every response carries (pages, API, errors). */
const SECURITY_HEADERS: Record<string, string> = {
  "x-content-type-options": "nosniff",
  // same-origin, not no-referrer: under no-referrer Chromium sends "Origin: null" on form POSTs,
  // which the CSRF check cannot tell from a sandboxed cross-site page.
  "referrer-policy": "same-origin",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=()",
};

/**
 * SECURITY_HEADERS, plus Strict-Transport-Security when the client reached the console over https
 * (PUBLIC_URL's scheme, or X-Forwarded-Proto from a trusted proxy) and ONCEBOARD_HSTS_MAX_AGE is not 0.
 * Over plain http it is never sent: a browser ignores it there, and a forged header must not set it.
 */
export function securityHeadersFor(headers: Pick<Headers, "get">): Record<string, string> {
  const maxAge = loadConfig().ONCEBOARD_HSTS_MAX_AGE;
  if (maxAge === 0 || !servedOverHttps(headers)) return SECURITY_HEADERS;
  return { ...SECURITY_HEADERS, "strict-transport-security": `max-age=${maxAge}; includeSubDomains` };
}

/**
 * What the console's front door puts on every response it lets out (proxy.ts for what Next.js
 * routes, lib/routes/direct-api.ts for what the console's server answers itself): the security
 * headers, this request's CSP, and Cache-Control: no-store unless it is a static file, the same
 * for everyone.
 */
export function markFrontDoorResponse(
  response: Response,
  requestHeaders: Pick<Headers, "get">,
  csp: string,
  options: { cacheable: boolean },
): Response {
  for (const [name, value] of Object.entries(securityHeadersFor(requestHeaders))) response.headers.set(name, value);
  response.headers.set("content-security-policy", csp);
  // Everything past the front door is one principal's (or says who may see it): never cached.
  if (!options.cacheable) response.headers.set("cache-control", "no-store");
  return response;
}
