import { randomBytes } from "node:crypto";
import { getPrisma, type PrismaClient } from "../db/prisma";
import { appendAudit } from "./audit";
import type { Principal } from "./auth-types";
import { principalOf } from "./authenticate";
import { openSession } from "./session";
import { findActiveToken, findActiveTokenById, hashSecret, type TokenSummary } from "./tokens";

interface LoginResult {
  principal: Principal;
  cookieValue: string;
  expiresAt: Date;
}

/**
 * Signs in with a token secret or a one-time login code, opening a server-side session
 * (lib/auth/session.ts); audited either way (a refused attempt as actor "anonymous"). Returns null
 * when refused; the caller answers the same for every reason.
 */
export async function login(
  input: { token?: string; code?: string; ip: string | null },
  db: PrismaClient = getPrisma(),
  now = new Date(),
): Promise<LoginResult | null> {
  let token: TokenSummary | null = null;
  if (input.token) token = await findActiveToken(input.token.trim(), db, now);
  else if (input.code) {
    const tokenId = await consumeLoginLink(input.code.trim(), db, now);
    token = tokenId ? await findActiveTokenById(tokenId, db, now) : null;
  }
  const session = token ? await openSession(token, { signedInWith: input.code ? "link" : "token", ip: input.ip }, db, now) : null;
  const result = token && session ? { principal: principalOf(token), ...session } : null;
  await appendAudit(db, {
    principal: result?.principal ?? null,
    action: input.code ? "login.link" : "login",
    tenantId: result?.principal.tenantId ?? null,
    result: result ? "ok" : "refused",
    ip: input.ip,
  });
  return result;
}

/** A one-time login code for a token: stored hashed, valid for `ttlMs`, usable once. */
export async function createLoginLink(
  tokenId: string,
  options: { ttlMs?: number; db?: Pick<PrismaClient, "loginLink"> } = {},
): Promise<{ code: string; expiresAt: Date }> {
  const code = randomBytes(24).toString("base64url");
  const expiresAt = new Date(Date.now() + (options.ttlMs ?? 24 * 3_600_000));
  await (options.db ?? getPrisma()).loginLink.create({ data: { codeHash: hashSecret(code), tokenId, expiresAt } });
  return { code, expiresAt };
}

/** Claims a code atomically (one UPDATE … WHERE used_at IS NULL): two tabs opening the link race, one wins. */
async function consumeLoginLink(code: string, db: Pick<PrismaClient, "loginLink">, now: Date): Promise<string | null> {
  if (!/^[A-Za-z0-9_-]{32}$/.test(code)) return null;
  const codeHash = hashSecret(code);
  const { count } = await db.loginLink.updateMany({
    where: { codeHash, usedAt: null, expiresAt: { gt: now } },
    data: { usedAt: now },
  });
  if (count !== 1) return null;
  return (await db.loginLink.findUnique({ where: { codeHash } }))?.tokenId ?? null;
}

/** The console URL that signs in with a code: the code travels in the fragment, never in a request line or log. */
export function loginLinkUrl(baseUrl: string, code: string): string {
  return `${baseUrl.replace(/\/$/, "")}/login#code=${code}`;
}
