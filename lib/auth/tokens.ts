import { createHash, randomBytes } from "node:crypto";
import { getPrisma, type PrismaClient } from "../db/prisma";
import { authChanged } from "./auth-cache";
import { ROLES, type Role } from "./auth-types";

/**
 * API tokens: `ob_` + 32 random bytes (base64url). Only their SHA-256 is stored; the secret is shown
 * once, at creation, and afterwards only its last 6 characters (`suffix`) identify it to people.
 */
const TOKEN_PREFIX = "ob_";
const TOKEN_SHAPE = /^ob_[A-Za-z0-9_-]{43}$/;

export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

export function looksLikeToken(value: string): boolean {
  return TOKEN_SHAPE.test(value);
}

export interface TokenSummary {
  id: string;
  name: string;
  tenantId: string | null;
  role: Role;
  suffix: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

interface CreateTokenInput {
  name: string;
  /** null: a platform token. */
  tenantId: string | null;
  role: Role;
  expiresAt?: Date | null;
  /** The token minting this one (lib/features/tokens-and-sessions/token-admin.ts bounds it by that token); null: minted on the host or by a person. */
  mintedBy?: string | null;
}

class TokenInputError extends Error {
  readonly code = "INVALID_INPUT";
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const TENANT_SHAPE = /^[^\s\u0000-\u001f\u007f]{1,255}$/;

/** Creates a token and returns its secret: the only time it exists outside the caller's hands. */
export async function createToken(
  input: CreateTokenInput,
  db: Pick<PrismaClient, "apiToken"> = getPrisma(),
): Promise<{ token: TokenSummary; secret: string }> {
  if (!ROLES.includes(input.role)) throw new TokenInputError(`role must be one of ${ROLES.join(", ")}`);
  if (input.tenantId !== null && !TENANT_SHAPE.test(input.tenantId)) {
    throw new TokenInputError("tenant must be 1-255 characters without spaces or control characters");
  }
  const secret = `${TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
  const row = await db.apiToken.create({
    data: {
      name: input.name,
      tenantId: input.tenantId,
      role: input.role,
      tokenHash: hashSecret(secret),
      prefix: secret.slice(-6),
      expiresAt: input.expiresAt ?? null,
      mintedById: input.mintedBy ?? null,
    },
  });
  return { token: toSummary(row), secret };
}

export async function listTokens(db: Pick<PrismaClient, "apiToken"> = getPrisma()): Promise<TokenSummary[]> {
  const rows = await db.apiToken.findMany({ orderBy: { createdAt: "asc" } });
  return rows.map(toSummary);
}

/**
 * Revokes a token and every token it minted, transitively (idempotent: an already revoked one
 * keeps its first revocation time). Returns false if unknown. A token minted by a token is only as
 * good as its minter: revoking a leaked token must not leave what it minted standing.
 */
export async function revokeToken(id: string, db: Pick<PrismaClient, "apiToken"> = getPrisma()): Promise<boolean> {
  return (await revokeTokenAndMinted(id, db)) !== null;
}

/**
 * revokeToken, answering which of the tokens the revoked one minted (transitively) this revoked
 * now, or null for an unknown id. Within a transaction that minted a token from this one
 * (createScopedToken locks the minter's row), the walk sees that token: the two are ordered.
 */
export async function revokeTokenAndMinted(
  id: string,
  db: Pick<PrismaClient, "apiToken"> = getPrisma(),
  now = new Date(),
): Promise<string[] | null> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return null;
  const { count } = await db.apiToken.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: now } });
  authChanged();
  if (count !== 1 && (await db.apiToken.count({ where: { id } })) !== 1) return null;
  const alsoRevoked: string[] = [];
  // Every generation, revoked or not: a token revoked earlier had its own minted ones revoked then,
  // but walking through it costs one query and keeps this true whatever happened before.
  for (let generation = [id]; generation.length > 0; ) {
    const minted = await db.apiToken.findMany({
      where: { mintedById: { in: generation } },
      select: { id: true, revokedAt: true },
    });
    const live = minted.filter((token) => token.revokedAt === null).map((token) => token.id);
    if (live.length > 0) {
      await db.apiToken.updateMany({ where: { id: { in: live }, revokedAt: null }, data: { revokedAt: now } });
      authChanged();
      alsoRevoked.push(...live);
    }
    generation = minted.map((token) => token.id);
  }
  return alsoRevoked;
}

// What a request's authentication (and the tokens list) reads of a token: the columns of a TokenSummary, no hash.
export const TOKEN_SUMMARY_COLUMNS = {
  id: true,
  name: true,
  tenantId: true,
  role: true,
  prefix: true,
  createdAt: true,
  expiresAt: true,
  revokedAt: true,
  lastUsedAt: true,
} as const;

/** The token a secret names, when it is neither revoked nor expired. */
export async function findActiveToken(
  secret: string,
  db: Pick<PrismaClient, "apiToken"> = getPrisma(),
  now = new Date(),
): Promise<TokenSummary | null> {
  if (!looksLikeToken(secret)) return null;
  const row = await db.apiToken.findUnique({ where: { tokenHash: hashSecret(secret) }, select: TOKEN_SUMMARY_COLUMNS });
  return row && isActive(row, now) ? toSummary(row) : null;
}

export async function findActiveTokenById(
  id: string,
  db: Pick<PrismaClient, "apiToken"> = getPrisma(),
  now = new Date(),
): Promise<TokenSummary | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
  const row = await db.apiToken.findUnique({ where: { id }, select: TOKEN_SUMMARY_COLUMNS });
  return row && isActive(row, now) ? toSummary(row) : null;
}

function isActive(row: { revokedAt: Date | null; expiresAt: Date | null }, now: Date): boolean {
  return row.revokedAt === null && (row.expiresAt === null || row.expiresAt.getTime() > now.getTime());
}

function toSummary(row: {
  id: string;
  name: string;
  tenantId: string | null;
  role: string;
  prefix: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}): TokenSummary {
  return {
    id: row.id,
    name: row.name,
    tenantId: row.tenantId,
    role: row.role as Role,
    suffix: row.prefix,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    revokedAt: row.revokedAt,
    lastUsedAt: row.lastUsedAt,
  };
}

/** "oncall (…a1b2c3)": how logs and the audit log name a token without revealing it. */
export function actorOf(token: Pick<TokenSummary, "name" | "suffix">): string {
  return `${token.name} (…${token.suffix})`;
}

/** "30d", "12h", "90m" → a Date that far from now. */
export function parseExpiry(value: string, now = new Date()): Date {
  const match = /^(\d{1,5})([dhm])$/.exec(value.trim());
  if (!match) throw new TokenInputError(`--expires must look like 30d, 12h or 90m, got "${value}"`);
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 }[match[2] as "d" | "h" | "m"];
  const ms = Number(match[1]) * unit;
  if (ms <= 0) throw new TokenInputError("--expires must be positive");
  return new Date(now.getTime() + ms);
}
