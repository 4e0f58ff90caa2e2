import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { loadConfig } from "../config";
import { getPrisma, type PrismaClient } from "../db/prisma";
import { sessionSecret } from "./secret";
import { findActiveTokenById, type TokenSummary } from "./tokens";

/**
 * Console sessions, kept on the server (table console_sessions). The cookie is `<id>.<signature>`:
 * id = 32 random bytes (base64url), signature = HMAC-SHA256 of it with sessionSecret(). The
 * signature only spares the database a lookup for a forged cookie; a session's authority is its row,
 * found by the id's SHA-256 (the id itself is never stored). A row is good while it is not revoked
 * (logout revokes it), not past its absolute expiry, and seen within the idle timeout; and its
 * token must still be active. There is no way in on the cookie alone: when the row or the token
 * cannot be read, the caller gets the database's error, never a principal.
 */
export const SESSION_COOKIE = "onceboard_session";

export type SignedInWith = "token" | "link";

/** The row, by Prisma Client: only what sessions read and write. */
export type SessionStore = Pick<PrismaClient, "consoleSession" | "apiToken">;

/** last_seen_at is written at most this often per session: a request does not cost a write. */
const LAST_SEEN_RESOLUTION_MS = 60_000;

function sign(id: string, secret: Buffer): string {
  return createHmac("sha256", secret).update(id).digest("base64url");
}

function hashSessionId(id: string): string {
  return createHash("sha256").update(id).digest("hex");
}

/** The session id a well-signed cookie value carries; null for anything else. */
export function sessionIdOf(value: string | undefined | null, secret = sessionSecret()): string | null {
  if (!value || value.length > 200) return null;
  const dot = value.indexOf(".");
  if (dot <= 0) return null;
  const id = value.slice(0, dot);
  if (!/^[A-Za-z0-9_-]{43}$/.test(id)) return null;
  const given = Buffer.from(value.slice(dot + 1), "base64url");
  const expected = Buffer.from(sign(id, secret), "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  return id;
}

export interface NewSession {
  cookieValue: string;
  expiresAt: Date;
}

/** Opens a session for an active token: ends at ONCEBOARD_SESSION_HOURS or the token's expiry, whichever is first. */
export async function openSession(
  token: TokenSummary,
  details: { signedInWith: SignedInWith; ip: string | null },
  db: Pick<PrismaClient, "consoleSession"> = getPrisma(),
  now = new Date(),
): Promise<NewSession> {
  let expiresAt = new Date(now.getTime() + loadConfig().ONCEBOARD_SESSION_HOURS * 3_600_000);
  if (token.expiresAt && token.expiresAt < expiresAt) expiresAt = token.expiresAt;
  const id = randomBytes(32).toString("base64url");
  await db.consoleSession.create({
    data: {
      idHash: hashSessionId(id),
      tokenId: token.id,
      createdAt: now,
      lastSeenAt: now,
      expiresAt,
      signedInWith: details.signedInWith,
      clientIp: details.ip,
    },
    select: { idHash: true },
  });
  return { cookieValue: `${id}.${sign(id, sessionSecret())}`, expiresAt };
}

/**
 * The token of the session a cookie value names, when the session and the token are both good at
 * `now`; null when either is not. Throws when the database cannot answer.
 */
export async function findSessionToken(
  cookieValue: string | undefined | null,
  db: SessionStore = getPrisma(),
  now = new Date(),
): Promise<TokenSummary | null> {
  const id = sessionIdOf(cookieValue);
  if (id === null) return null;
  const idHash = hashSessionId(id);
  const row = await db.consoleSession.findUnique({
    where: { idHash },
    select: { tokenId: true, lastSeenAt: true, expiresAt: true, revokedAt: true },
  });
  if (!row || row.revokedAt !== null || row.expiresAt.getTime() <= now.getTime()) return null;
  const idleMs = loadConfig().ONCEBOARD_SESSION_IDLE_MINUTES * 60_000;
  if (now.getTime() - row.lastSeenAt.getTime() >= idleMs) return null;
  const token = await findActiveTokenById(row.tokenId, db, now);
  if (!token) return null;
  if (now.getTime() - row.lastSeenAt.getTime() >= LAST_SEEN_RESOLUTION_MS) {
    // Conditional, so concurrent requests (or console processes) stamp it once; a lost stamp only
    // brings the idle timeout a minute closer.
    await db.consoleSession
      .updateMany({
        where: { idHash, lastSeenAt: { lt: new Date(now.getTime() - LAST_SEEN_RESOLUTION_MS) } },
        data: { lastSeenAt: now },
      })
      .catch(() => {});
  }
  return token;
}

/** Ends the session a cookie value names (logout). True when a live session was revoked. Throws when the database cannot answer. */
export async function revokeSession(
  cookieValue: string | undefined | null,
  db: Pick<PrismaClient, "consoleSession"> = getPrisma(),
  now = new Date(),
): Promise<boolean> {
  const id = sessionIdOf(cookieValue);
  if (id === null) return false;
  const { count } = await db.consoleSession.updateMany({
    where: { idHash: hashSessionId(id), revokedAt: null },
    data: { revokedAt: now },
  });
  return count === 1;
}

/** Set-Cookie attributes: httpOnly, SameSite=Strict, Secure when served over https. */
export function sessionCookieHeader(value: string, expiresAt: Date, secure: boolean, now = Date.now()): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - now) / 1000));
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
