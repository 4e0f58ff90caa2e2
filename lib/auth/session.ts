import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { loadConfig } from "../config";
import { getPrisma, type PrismaClient } from "../db/prisma";
import { type Principal, ROLES, type Role } from "./auth-types";
import { sessionSecret } from "./secret";
import { findActiveTokenById, type TokenSummary } from "./tokens";

/**
 * Console sessions, kept on the server (table console_sessions). The cookie is `<id>.<signature>`:
 * id = 32 random bytes (base64url), signature = HMAC-SHA256 of it with sessionSecret(). The
 * signature only spares the database a lookup for a forged cookie; a session's authority is its row,
 * found by the id's SHA-256 (the id itself is never stored). A row is good while it is not revoked
 * (logout revokes it), not past its absolute expiry, and seen within the idle timeout; and its
 * token, when it has one, must still be active. A session signed in through the identity provider
 * (OIDC) has no token: its row carries the person, role and tenant, and its absolute expiry is no
 * later than the ID token's. There is no way in on the cookie alone: when the row or the token
 * cannot be read, the caller gets the database's error, never a principal.
 */
export const SESSION_COOKIE = "onceboard_session";

type SignedInWith = "token" | "link" | "oidc";

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
function sessionIdOf(value: string | undefined | null, secret = sessionSecret()): string | null {
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

interface NewSession {
  cookieValue: string;
  expiresAt: Date;
}

function newSessionId(): { id: string; cookieValue: string } {
  const id = randomBytes(32).toString("base64url");
  return { id, cookieValue: `${id}.${sign(id, sessionSecret())}` };
}

function sessionEnd(now: Date, notAfter: Date | null): Date {
  const expiresAt = new Date(now.getTime() + loadConfig().ONCEBOARD_SESSION_HOURS * 3_600_000);
  return notAfter && notAfter < expiresAt ? notAfter : expiresAt;
}

/** Opens a session for an active token: ends at ONCEBOARD_SESSION_HOURS or the token's expiry, whichever is first. */
export async function openSession(
  token: TokenSummary,
  details: { signedInWith: Exclude<SignedInWith, "oidc">; ip: string | null },
  db: Pick<PrismaClient, "consoleSession"> = getPrisma(),
  now = new Date(),
): Promise<NewSession> {
  const expiresAt = sessionEnd(now, token.expiresAt);
  const { id, cookieValue } = newSessionId();
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
  return { cookieValue, expiresAt };
}

/** A person the identity provider vouched for, with the role and tenant their groups map to. */
interface OidcIdentity {
  issuer: string;
  subject: string;
  actor: string;
  role: Role;
  /** null: the platform. */
  tenantId: string | null;
  /** The ID token's expiry: the session ends then at the latest. */
  idTokenExpiresAt: Date;
  /** Kept as the id_token_hint of RP-initiated logout. */
  idToken: string;
}

/** Opens a session for a person signed in through the identity provider: ends at ONCEBOARD_SESSION_HOURS or the ID token's expiry, whichever is first. */
export async function openOidcSession(
  identity: OidcIdentity,
  details: { ip: string | null },
  db: Pick<PrismaClient, "consoleSession"> = getPrisma(),
  now = new Date(),
): Promise<NewSession> {
  const expiresAt = sessionEnd(now, identity.idTokenExpiresAt);
  const { id, cookieValue } = newSessionId();
  await db.consoleSession.create({
    data: {
      idHash: hashSessionId(id),
      tokenId: null,
      createdAt: now,
      lastSeenAt: now,
      expiresAt,
      signedInWith: "oidc",
      clientIp: details.ip,
      oidcIssuer: identity.issuer,
      oidcSubject: identity.subject,
      actor: identity.actor,
      role: identity.role,
      tenantId: identity.tenantId,
      idToken: identity.idToken,
    },
    select: { idHash: true },
  });
  return { cookieValue, expiresAt };
}

/** Who a good session is: its token (a token's session), or the person the identity provider vouched for. */
type SessionHolder = { kind: "token"; token: TokenSummary } | { kind: "oidc"; principal: Principal };

/**
 * Who the session a cookie value names is, when the session (and its token, if it has one) is good
 * at `now`; null when not. Throws when the database cannot answer.
 */
export async function findSession(
  cookieValue: string | undefined | null,
  db: SessionStore = getPrisma(),
  now = new Date(),
): Promise<SessionHolder | null> {
  const id = sessionIdOf(cookieValue);
  if (id === null) return null;
  const idHash = hashSessionId(id);
  const row = await db.consoleSession.findUnique({
    where: { idHash },
    select: {
      tokenId: true,
      lastSeenAt: true,
      expiresAt: true,
      revokedAt: true,
      signedInWith: true,
      oidcSubject: true,
      actor: true,
      role: true,
      tenantId: true,
    },
  });
  if (!row || row.revokedAt !== null || row.expiresAt.getTime() <= now.getTime()) return null;
  const idleMs = loadConfig().ONCEBOARD_SESSION_IDLE_MINUTES * 60_000;
  if (now.getTime() - row.lastSeenAt.getTime() >= idleMs) return null;
  let holder: SessionHolder | null = null;
  if (row.tokenId !== null) {
    const token = await findActiveTokenById(row.tokenId, db, now);
    holder = token ? { kind: "token", token } : null;
  } else if (row.signedInWith === "oidc" && row.oidcSubject && row.actor && ROLES.includes(row.role as Role)) {
    holder = {
      kind: "oidc",
      principal: {
        tokenId: null,
        oidcSubject: row.oidcSubject,
        actor: row.actor,
        tenantId: row.tenantId,
        role: row.role as Role,
      },
    };
  }
  if (!holder) return null;
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
  return holder;
}

/** Why a session cookie no longer signs anyone in: said on /login, so a revoked session is not a silent sign-out. */
export type SessionEndReason = "session-revoked" | "token-revoked" | "session-expired" | "session-ended";

/**
 * Why the session a cookie value names is not good at `now` (findSession answered null for it):
 * revoked (by an admin; or signed out, though a sign-out also clears its cookie), its token revoked or expired, past
 * its expiry or idle timeout, or unknown (a forged or foreign cookie, a row since deleted, another
 * ONCEBOARD_SECRET). Null without a cookie, or when the session is in fact good. Only for the
 * message: it signs no one in, and a database error is the caller's to ignore.
 */
export async function whySessionEnded(
  cookieValue: string | undefined | null,
  db: SessionStore = getPrisma(),
  now = new Date(),
): Promise<SessionEndReason | null> {
  if (!cookieValue) return null;
  const id = sessionIdOf(cookieValue);
  if (id === null) return "session-ended";
  const row = await db.consoleSession.findUnique({
    where: { idHash: hashSessionId(id) },
    select: { tokenId: true, lastSeenAt: true, expiresAt: true, revokedAt: true },
  });
  if (!row) return "session-ended";
  if (row.revokedAt !== null) return "session-revoked";
  const idleMs = loadConfig().ONCEBOARD_SESSION_IDLE_MINUTES * 60_000;
  if (row.expiresAt.getTime() <= now.getTime() || now.getTime() - row.lastSeenAt.getTime() >= idleMs) return "session-expired";
  if (row.tokenId !== null && !(await findActiveTokenById(row.tokenId, db, now))) return "token-revoked";
  return null;
}

/** The token of the session a cookie value names, when it is a token's session and both are good at `now`. */
export async function findSessionToken(
  cookieValue: string | undefined | null,
  db: SessionStore = getPrisma(),
  now = new Date(),
): Promise<TokenSummary | null> {
  const holder = await findSession(cookieValue, db, now);
  return holder?.kind === "token" ? holder.token : null;
}

/**
 * Ends the session a cookie value names (logout). Returns whether a live session was revoked, and
 * its ID token when it was signed in through the identity provider (for RP-initiated logout).
 * Throws when the database cannot answer.
 */
export async function endSession(
  cookieValue: string | undefined | null,
  db: Pick<PrismaClient, "consoleSession"> = getPrisma(),
  now = new Date(),
): Promise<{ revoked: boolean; idToken: string | null }> {
  const id = sessionIdOf(cookieValue);
  if (id === null) return { revoked: false, idToken: null };
  const idHash = hashSessionId(id);
  const { count } = await db.consoleSession.updateMany({ where: { idHash, revokedAt: null }, data: { revokedAt: now } });
  if (count !== 1) return { revoked: false, idToken: null };
  const row = await db.consoleSession.findUnique({ where: { idHash }, select: { idToken: true } });
  return { revoked: true, idToken: row?.idToken ?? null };
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
