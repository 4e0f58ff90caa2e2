import { ApiError } from "../../api/errors";
import { appendAudit } from "../../auth/audit";
import { authChanged } from "../../auth/auth-cache";
import { type Principal, type Role, roleAtLeast } from "../../auth/auth-types";
import type { Scope } from "../../auth/scope";
import { createToken, revokeTokenAndMinted, TOKEN_SUMMARY_COLUMNS, type TokenSummary } from "../../auth/tokens";
import { getPrisma, type PrismaClient } from "../../db/prisma";
import { TOKEN_KEYSET } from "./admin-keysets";
import type { TokenView } from "./contract";

/**
 * Machine tokens as the admin page and /api/v1/tokens manage them. A tenant admin's scope reads and
 * changes its own tenant's tokens only (another tenant's token answers 404, like a missing one);
 * a platform admin's, every tenant's and the platform's. Every change appends its audit row in the
 * transaction that makes it.
 */

function tokenView(token: TokenSummary, now = new Date()): TokenView {
  const state =
    token.revokedAt !== null ? "revoked" : token.expiresAt && token.expiresAt.getTime() <= now.getTime() ? "expired" : "active";
  return {
    id: token.id,
    name: token.name,
    tenantId: token.tenantId,
    role: token.role,
    suffix: token.suffix,
    createdAt: token.createdAt.toISOString(),
    expiresAt: token.expiresAt?.toISOString() ?? null,
    revokedAt: token.revokedAt?.toISOString() ?? null,
    lastUsedAt: token.lastUsedAt?.toISOString() ?? null,
    state,
  };
}

/** Which tokens a scope may see: a tenant's own; a platform scope's narrowed tenant, or all. */
function tokenWhere(scope: Scope): { tenantId?: string } {
  return scope.tenant !== null ? { tenantId: scope.tenant } : {};
}

/** The scope's tokens, newest first (revoked and expired ones too: the page says so), a page at a time. */
export async function listScopedTokens(
  scope: Scope,
  page: { cursor?: string; limit: number },
  db: Pick<PrismaClient, "apiToken"> = getPrisma(),
  now = new Date(),
): Promise<{ tokens: TokenView[]; nextCursor: string | null }> {
  const before = page.cursor ? (TOKEN_KEYSET.decode(page.cursor)[0] ?? null) : null;
  const rows = await db.apiToken.findMany({
    where: { ...tokenWhere(scope), ...(before !== null ? { seq: { lt: BigInt(before) } } : {}) },
    orderBy: { seq: "desc" },
    select: { ...TOKEN_SUMMARY_COLUMNS, seq: true },
    take: page.limit + 1,
  });
  const { rows: shown, nextCursor } = TOKEN_KEYSET.page(
    rows.map((row) => ({ ...row, keyset_0: row.seq })),
    page.limit,
  );
  return {
    tokens: shown.map(({ seq: _seq, keyset_0: _k, ...row }) =>
      tokenView({ ...row, role: row.role as Role, suffix: row.prefix }, now),
    ),
    nextCursor,
  };
}

interface NewTokenRequest {
  name: string;
  role: Role;
  /** The tenant it is bound to; null: a platform token (platform admins only); undefined: the caller's own tenant. */
  tenantId?: string | null;
  expiresAt?: Date | null;
}

/**
 * Creates a token within the caller's scope and audits it; the secret is returned this once.
 *
 * A token (or a token's console session) minting another is its minter: the new token never
 * outranks it (role at most the minter's), never outlives it (an omitted expiry is the minter's,
 * a later one or none at all is refused while the minter expires), and is revoked with it
 * (api_tokens.minted_by, lib/auth/tokens.ts revokeTokenAndMinted). The minter's row is locked in
 * the transaction that mints (an UPDATE that re-checks it is live), so a revocation committing
 * meanwhile either refuses this mint or revokes what it minted. A person signed in through the
 * identity provider mints with no minter token: their role and tenant bound it, and the token
 * keeps the expiry asked for.
 */
export async function createScopedToken(
  input: { scope: Scope; principal: Principal; ip: string | null; request: NewTokenRequest },
  db: PrismaClient = getPrisma(),
  now = new Date(),
): Promise<{ token: TokenView; secret: string }> {
  const { scope, request, principal } = input;
  let tenantId: string | null;
  if (!scope.platform) {
    const own = scope.oneTenant();
    if (request.tenantId !== undefined && request.tenantId !== own) {
      throw new ApiError("FORBIDDEN", `a tenant admin creates tokens for its own tenant (${own}) only`);
    }
    tenantId = own;
  } else {
    tenantId = request.tenantId ?? null;
  }
  if (!roleAtLeast(principal.role, request.role)) {
    throw new ApiError("FORBIDDEN", `a ${principal.role} cannot create a ${request.role} token: never above its own role`);
  }
  if (request.expiresAt && request.expiresAt.getTime() <= now.getTime()) {
    throw new ApiError("INVALID_INPUT", "invalid body: expiresAt must be in the future", [
      { path: "expiresAt", message: "must be in the future" },
    ]);
  }
  return db.$transaction(async (tx) => {
    let expiresAt = request.expiresAt ?? null;
    if (principal.tokenId !== null) {
      // Locks the minter's row and re-reads it after any revocation holding it: live, or no mint.
      const { count } = await tx.apiToken.updateMany({
        where: { id: principal.tokenId, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
        data: { lastUsedAt: now },
      });
      if (count !== 1) throw new ApiError("UNAUTHENTICATED", "the token creating this one has been revoked or has expired");
      const minter = await tx.apiToken.findUniqueOrThrow({ where: { id: principal.tokenId }, select: { expiresAt: true } });
      if (minter.expiresAt !== null) {
        if (request.expiresAt === undefined) expiresAt = minter.expiresAt;
        else if (expiresAt === null || expiresAt.getTime() > minter.expiresAt.getTime()) {
          const message = `must be at or before ${minter.expiresAt.toISOString()}, when the token creating it expires`;
          throw new ApiError("INVALID_INPUT", `invalid body: expiresAt ${message}`, [{ path: "expiresAt", message }]);
        }
      }
    }
    const { token, secret } = await createToken(
      { name: request.name, tenantId, role: request.role, expiresAt, mintedBy: principal.tokenId },
      tx,
    );
    await appendAudit(tx, {
      principal,
      action: "token.create",
      tenantId,
      target: token.id,
      result: "ok",
      detail: {
        name: token.name,
        role: token.role,
        suffix: token.suffix,
        expiresAt: token.expiresAt?.toISOString() ?? null,
        mintedBy: principal.tokenId,
      },
      ip: input.ip,
    });
    return { token: tokenView(token, now), secret };
  });
}

/**
 * Revokes a token of the caller's scope (idempotent) and every token it minted, and audits it;
 * their console sessions end with them (a session is only as good as its token). 404 for a token the scope does not hold.
 */
export async function revokeScopedToken(
  input: { scope: Scope; principal: Principal; ip: string | null; id: string },
  db: PrismaClient = getPrisma(),
  now = new Date(),
): Promise<TokenView> {
  // After the commit, this process's cached principals go (lib/auth/auth-cache.ts): its next request reads the row.
  return db
    .$transaction(async (tx) => {
      const found = await tx.apiToken.findFirst({ where: { id: input.id, ...tokenWhere(input.scope) }, select: { id: true } });
      if (!found) throw new ApiError("NOT_FOUND", "no token with this id");
      const alsoRevoked = (await revokeTokenAndMinted(found.id, tx, now)) ?? [];
      const row = await tx.apiToken.findUniqueOrThrow({ where: { id: found.id } });
      await appendAudit(tx, {
        principal: input.principal,
        action: "token.revoke",
        tenantId: row.tenantId,
        target: row.id,
        result: "ok",
        // What this token minted goes with it; the audit row names them.
        detail: { name: row.name, suffix: row.prefix, ...(alsoRevoked.length > 0 ? { alsoRevoked } : {}) },
        ip: input.ip,
      });
      return tokenView({ ...row, role: row.role as Role, suffix: row.prefix }, now);
    })
    .finally(authChanged);
}
