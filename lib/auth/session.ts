import { createHmac, timingSafeEqual } from "node:crypto";
import { ROLES, type Role } from "./auth-types";
import { sessionSecret } from "./secret";

/**
 * The console session cookie: `<payload>.<signature>`, payload = base64url JSON {t: token id,
 * e: expiry in epoch seconds}, signature = HMAC-SHA256 with sessionSecret(). It names a token, it
 * never contains one: every request still checks that the token is neither revoked nor expired.
 */
export const SESSION_COOKIE = "onceboard_session";

export interface SessionClaims {
  tokenId: string;
  expiresAt: Date;
  /** Who the token was at sign-in: used only while the database cannot be reached (see authenticate()). */
  role?: Role;
  tenantId?: string | null;
  actor?: string;
}

function sign(payload: string, secret: Buffer): string {
  return createHmac("sha256", secret).update(payload).digest("base64url");
}

export function encodeSession(claims: SessionClaims, secret = sessionSecret()): string {
  const payload = Buffer.from(
    JSON.stringify({
      t: claims.tokenId,
      e: Math.floor(claims.expiresAt.getTime() / 1000),
      r: claims.role,
      n: claims.tenantId,
      a: claims.actor,
    }),
  ).toString("base64url");
  return `${payload}.${sign(payload, secret)}`;
}

/** The claims of a well-signed, unexpired cookie value; null for anything else. */
export function decodeSession(
  value: string | undefined | null,
  now = Date.now(),
  secret = sessionSecret(),
): SessionClaims | null {
  if (!value || value.length > 512) return null;
  const dot = value.indexOf(".");
  if (dot <= 0) return null;
  const payload = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1), "base64url");
  const expected = Buffer.from(sign(payload, secret), "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    const parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>;
    if (typeof parsed.t !== "string" || typeof parsed.e !== "number") return null;
    if (parsed.e * 1000 <= now) return null;
    return {
      tokenId: parsed.t,
      expiresAt: new Date(parsed.e * 1000),
      role: ROLES.includes(parsed.r as Role) ? (parsed.r as Role) : undefined,
      tenantId: typeof parsed.n === "string" ? parsed.n : null,
      actor: typeof parsed.a === "string" ? parsed.a : undefined,
    };
  } catch {
    return null;
  }
}

/** Set-Cookie attributes: httpOnly, SameSite=Strict, Secure when served over https. */
export function sessionCookieHeader(value: string, expiresAt: Date, secure: boolean): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  return `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? "; Secure" : ""}`;
}

export function clearSessionCookieHeader(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? "; Secure" : ""}`;
}

/** The session cookie's value from a Cookie header. */
export function readSessionCookie(cookieHeader: string | null | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}
