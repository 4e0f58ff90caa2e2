import { ConsoleError, translateDatabaseError } from "../console/errors";
import { getPrisma } from "../db/prisma";
import { type AuthCache, consoleAuthCache, credentialKey } from "./auth-cache";
import type { Principal } from "./auth-types";
import { clientIpOf } from "./client-ip";
import { addressKey } from "./rate-limit";
import { findSession, readSessionCookie, type SessionStore } from "./session";
import { actorOf, findActiveToken, type TokenSummary } from "./tokens";

/** The admin table authentication reads (and stamps last use on), through Prisma Client. */
export type TokenReader = SessionStore;

export interface Authenticated {
  principal: Principal;
  via: "bearer" | "session";
}

export function principalOf(token: TokenSummary): Principal {
  return { tokenId: token.id, actor: actorOf(token), tenantId: token.tenantId, role: token.role };
}

/**
 * Who a request is: `Authorization: Bearer <token>` first, else the session cookie. A token is
 * looked up (by hash, or through the server-side session the cookie names, lib/auth/session.ts)
 * and must be neither revoked nor expired; a session signed in through the identity provider is
 * its own principal (lib/auth/oidc-sign-in.ts). A present but bad Authorization header is not rescued by a cookie.
 * On the console's own database (no `db` or `now` given), a good answer is kept for a moment
 * (lib/auth/auth-cache.ts: emptied when any token or session is revoked, at most ONCEBOARD_AUTH_CACHE_MS).
 */
export async function authenticate(headers: Headers, db?: TokenReader, now?: Date): Promise<Authenticated | null> {
  try {
    if (db !== undefined || now !== undefined) return await lookUp(headers, db ?? getPrisma(), now ?? new Date());
    return await lookUpCached(headers, getPrisma(), new Date());
  } catch (error) {
    throw databaseError(error);
  }
}

/** What the cache keeps of a good answer: the token too, for its last-use stamp. */
interface Known {
  auth: Authenticated;
  token: TokenSummary | null;
}

async function lookUpCached(headers: Headers, db: TokenReader, now: Date): Promise<Authenticated | null> {
  const cache = consoleAuthCache<Known>();
  const key = credentialsOf(headers);
  if (!cache || key === null) return lookUp(headers, db, now);
  return fromMemory(cache, key, db, now) ?? lookUp(headers, db, now, { cache, key, generation: cache.generation() });
}

/**
 * Who the request is when the cache holds its credential (for a Bearer token: as presented from
 * this client address), else null without reading anything. lib/auth/guard.ts lets such a request
 * skip the address's check for unknown tokens: the entry was made by a request that passed it, and
 * an address's block empties every cache when it begins (lib/auth/rate-limit.ts).
 */
export function authenticatedFromMemory(headers: Headers): Authenticated | null {
  const key = credentialsOf(headers);
  if (key === null) return null;
  const cache = consoleAuthCache<Known>();
  return cache ? fromMemory(cache, key, getPrisma(), new Date()) : null;
}

function fromMemory(cache: AuthCache<Known>, key: string, db: TokenReader, now: Date): Authenticated | null {
  const known = cache.get(key, now.getTime());
  if (!known) return null;
  if (known.token && touch(known.token, db, now)) known.token = { ...known.token, lastUsedAt: now };
  return known.auth;
}

/**
 * The credential a request presents, as the cache's key; null when it presents none the cache
 * keeps. A Bearer token is kept per client address, so a token's answer is never reused for an
 * address that did not itself pass the unknown-token check with it.
 */
function credentialsOf(headers: Headers): string | null {
  const authorization = headers.get("authorization");
  if (authorization !== null) return credentialKey("bearer", `${addressKey(clientIpOf(headers))}\n${authorization}`);
  const cookie = readSessionCookie(headers.get("cookie"));
  return cookie ? credentialKey("session", cookie) : null;
}

/**
 * A Prisma/pg failure as the console's ConsoleError (DATABASE_UNAVAILABLE, QUERY_TIMEOUT…) when it is
 * one: Prisma's driver adapter wraps the pg error, so the cause chain is searched.
 */
export function databaseError(error: unknown): unknown {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    const translated = translateDatabaseError(current);
    if (translated instanceof ConsoleError) return translated;
    const e = current as { cause?: unknown; meta?: { driverAdapterError?: unknown } };
    current = e.cause ?? e.meta?.driverAdapterError;
  }
  // Prisma's pg adapter reports "kinds" rather than pg errors.
  const cause = (error as { meta?: { driverAdapterError?: { cause?: Record<string, unknown> } } })?.meta?.driverAdapterError
    ?.cause;
  if (cause) {
    const kind = String(cause.kind ?? "");
    if (kind === "DatabaseNotReachable" || kind === "ConnectionClosed" || kind === "SocketTimeout") {
      return new ConsoleError("DATABASE_UNAVAILABLE", "cannot reach PostgreSQL (connection refused)", { cause: error });
    }
    if (kind === "DatabaseDoesNotExist") {
      return new ConsoleError("DATABASE_UNAVAILABLE", "the configured database does not exist", { cause: error });
    }
    if (kind === "AuthenticationFailed" || kind === "DatabaseAccessDenied") {
      return new ConsoleError("DATABASE_UNAVAILABLE", "the database refused the console's login", { cause: error });
    }
    const code = cause.originalCode ?? cause.code;
    if (typeof code === "string") {
      const translated = translateDatabaseError({ code, message: String(cause.originalMessage ?? cause.message ?? "") });
      if (translated instanceof ConsoleError) return translated;
    }
  }
  if (error instanceof Error && /DATABASE_URL is not set/.test(error.message)) {
    return new ConsoleError("DATABASE_NOT_CONFIGURED", error.message, { cause: error });
  }
  return error;
}

async function lookUp(
  headers: Headers,
  db: TokenReader,
  now: Date,
  keep?: { cache: AuthCache<Known>; key: string; generation: number },
): Promise<Authenticated | null> {
  const remember = (auth: Authenticated, token: TokenSummary | null, ...ends: (Date | null)[]) => {
    const notAfter = Math.min(...ends.map((end) => end?.getTime() ?? Number.POSITIVE_INFINITY));
    keep?.cache.set(keep.key, { auth, token }, keep.generation, notAfter, now.getTime());
    return auth;
  };
  const authorization = headers.get("authorization");
  if (authorization !== null) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) return null;
    const token = await findActiveToken(match[1] ?? "", db, now);
    if (!token) return null;
    const stamped = touch(token, db, now);
    return remember(
      { principal: principalOf(token), via: "bearer" },
      stamped ? { ...token, lastUsedAt: now } : token,
      token.expiresAt,
    );
  }
  // No way in on the cookie alone: when the session or its token cannot be read, this throws
  // (the API answers 503, a page its outage state), it never guesses who the cookie was.
  const holder = await findSession(readSessionCookie(headers.get("cookie")), db, now);
  if (!holder) return null;
  if (holder.kind === "oidc") return remember({ principal: holder.principal, via: "session" }, null, holder.expiresAt);
  const stamped = touch(holder.token, db, now);
  return remember(
    { principal: principalOf(holder.token), via: "session" },
    stamped ? { ...holder.token, lastUsedAt: now } : holder.token,
    holder.expiresAt,
    holder.token.expiresAt,
  );
}

/**
 * last_used_at, at most once a minute per token, off the request's path (a failure only loses the
 * stamp). The WHERE makes a second stamp within the minute (another console process, a concurrent
 * request) a no-op. Answers whether it stamped.
 */
function touch(token: TokenSummary, db: TokenReader, now: Date): boolean {
  if (token.lastUsedAt && now.getTime() - token.lastUsedAt.getTime() < 60_000) return false;
  const aMinuteAgo = new Date(now.getTime() - 60_000);
  void db.apiToken
    .updateMany({
      where: { id: token.id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: aMinuteAgo } }] },
      data: { lastUsedAt: now },
    })
    .catch(() => {});
  return true;
}
