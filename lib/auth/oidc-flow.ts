import { createHmac, timingSafeEqual } from "node:crypto";
import type { AuthorizationChecks } from "./oidc-client";
import { nextPathOrDefault } from "./safe-next";
import { sessionSecret } from "./secret";

/**
 * One sign-in through the identity provider in flight: its state, nonce and PKCE verifier, and the
 * page to open afterwards, in a short-lived cookie signed with the session secret. Not the session
 * cookie: that one is SameSite=Strict, and the provider's redirect back is a cross-site navigation
 * that would not carry it; this one is SameSite=Lax (sent on that top-level GET), httpOnly, and
 * sent only to /api/auth/oidc. The callback clears it, so the flow is used once by this browser;
 * the code itself is single-use at the provider.
 */
export const OIDC_FLOW_COOKIE = "onceboard_oidc_flow";
const FLOW_PATH = "/api/auth/oidc";
/** Time to sign in at the provider before the flow is stale. */
export const OIDC_FLOW_TTL_SECONDS = 600;

export interface OidcFlow extends AuthorizationChecks {
  next: string;
  /** ms since the epoch. */
  expiresAt: number;
}

function sign(payload: string): string {
  return createHmac("sha256", sessionSecret()).update(`oidc-flow:${payload}`).digest("base64url");
}

export function flowCookieHeader(flow: OidcFlow, secure: boolean): string {
  const payload = Buffer.from(JSON.stringify(flow)).toString("base64url");
  return `${OIDC_FLOW_COOKIE}=${payload}.${sign(payload)}; Path=${FLOW_PATH}; HttpOnly; SameSite=Lax; Max-Age=${OIDC_FLOW_TTL_SECONDS}${secure ? "; Secure" : ""}`;
}

export function clearFlowCookieHeader(secure: boolean): string {
  return `${OIDC_FLOW_COOKIE}=; Path=${FLOW_PATH}; HttpOnly; SameSite=Lax; Max-Age=0${secure ? "; Secure" : ""}`;
}

/** The flow a Cookie header carries, when it is well signed and not stale; null otherwise. */
export function readFlowCookie(cookieHeader: string | null, now = Date.now()): OidcFlow | null {
  if (!cookieHeader) return null;
  let value: string | undefined;
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === OIDC_FLOW_COOKIE) value = part.slice(eq + 1).trim();
  }
  if (!value || value.length > 4000) return null;
  const dot = value.indexOf(".");
  if (dot <= 0) return null;
  const payload = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1), "base64url");
  const expected = Buffer.from(sign(payload), "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let flow: Partial<OidcFlow>;
  try {
    flow = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  const { state, nonce, codeVerifier, next, expiresAt } = flow;
  if (typeof state !== "string" || typeof nonce !== "string" || typeof codeVerifier !== "string") return null;
  if (typeof expiresAt !== "number" || expiresAt <= now) return null;
  return { state, nonce, codeVerifier, next: nextPathOrDefault(next), expiresAt };
}
