import { ApiError } from "../../api/errors";
import { appendAudit } from "../../auth/audit";
import { authChanged } from "../../auth/auth-cache";
import type { Principal, Role } from "../../auth/auth-types";
import type { Scope } from "../../auth/scope";
import { actorOf } from "../../auth/tokens";
import { loadConfig } from "../../config";
import { getPrisma, type PrismaClient } from "../../db/prisma";
import { SESSION_KEYSET } from "./admin-keysets";
import type { SessionView } from "./contract";

/**
 * Live console sessions as the admin page and /api/v1/sessions show them, named by their public id
 * (never the cookie's secret or its hash, which would let a reader of this list sign in as them).
 * A tenant admin sees and revokes the sessions of its own tenant only: a token session's tenant is
 * its token's; an OIDC session (no token) carries its own actor, role and tenant on the row.
 */

/** A session still good at `now`: not revoked, not past its expiry, seen within the idle timeout, its token active. */
function liveWhere(scope: Scope, now: Date) {
  const idleSince = new Date(now.getTime() - loadConfig().ONCEBOARD_SESSION_IDLE_MINUTES * 60_000);
  const tokenLive = { revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] };
  return {
    revokedAt: null,
    expiresAt: { gt: now },
    lastSeenAt: { gt: idleSince },
    OR: [
      { tokenId: { not: null }, token: { ...tokenLive, ...(scope.tenant !== null ? { tenantId: scope.tenant } : {}) } },
      { tokenId: null, signedInWith: "oidc", ...(scope.tenant !== null ? { tenantId: scope.tenant } : {}) },
    ],
  };
}

/** Who a session is: its token's name, role and tenant, or (OIDC, no token) what the row says. */
function sessionOwner(row: {
  actor: string | null;
  role: string | null;
  tenantId: string | null;
  token: { name: string; prefix: string; tenantId: string | null; role: string } | null;
}): { actor: string; role: Role; tenantId: string | null } {
  if (row.token) {
    return {
      actor: actorOf({ name: row.token.name, suffix: row.token.prefix }),
      role: row.token.role as Role,
      tenantId: row.token.tenantId,
    };
  }
  return { actor: row.actor ?? "oidc (unknown)", role: (row.role ?? "viewer") as Role, tenantId: row.tenantId };
}

export async function listLiveSessions(
  scope: Scope,
  page: { cursor?: string; limit: number },
  db: Pick<PrismaClient, "consoleSession"> = getPrisma(),
  now = new Date(),
): Promise<{ sessions: SessionView[]; nextCursor: string | null }> {
  const before = page.cursor ? (SESSION_KEYSET.decode(page.cursor)[0] ?? null) : null;
  const rows = await db.consoleSession.findMany({
    where: { ...liveWhere(scope, now), ...(before !== null ? { seq: { lt: BigInt(before) } } : {}) },
    orderBy: { seq: "desc" },
    take: page.limit + 1,
    select: {
      seq: true,
      publicId: true,
      tokenId: true,
      createdAt: true,
      lastSeenAt: true,
      expiresAt: true,
      signedInWith: true,
      clientIp: true,
      actor: true,
      role: true,
      tenantId: true,
      token: { select: { name: true, prefix: true, tenantId: true, role: true } },
    },
  });
  const { rows: shown, nextCursor } = SESSION_KEYSET.page(
    rows.map((row) => ({ ...row, keyset_0: row.seq })),
    page.limit,
  );
  return {
    sessions: shown.map((row) => ({
      id: row.publicId,
      ...sessionOwner(row),
      tokenId: row.tokenId,
      signedInWith: row.signedInWith,
      clientIp: row.clientIp,
      createdAt: row.createdAt.toISOString(),
      lastSeenAt: row.lastSeenAt.toISOString(),
      expiresAt: row.expiresAt.toISOString(),
    })),
    nextCursor,
  };
}

/**
 * Ends a session of the caller's scope by its public id; its next request is refused (the row is
 * what a cookie's authority is). Audited in the same transaction. 404 for a session the scope does
 * not hold or that has already ended.
 */
export async function revokeScopedSession(
  input: { scope: Scope; principal: Principal; ip: string | null; id: string },
  db: PrismaClient = getPrisma(),
  now = new Date(),
): Promise<{ id: string; revoked: true }> {
  // After the commit, this process's cached principals go (lib/auth/auth-cache.ts): its next request reads the row.
  return db
    .$transaction(async (tx) => {
      const row = await tx.consoleSession.findFirst({
        where: { publicId: input.id, ...liveWhere(input.scope, now) },
        select: {
          idHash: true,
          actor: true,
          role: true,
          tenantId: true,
          token: { select: { tenantId: true, name: true, prefix: true, role: true } },
        },
      });
      if (!row) throw new ApiError("NOT_FOUND", "no live session with this id");
      // Conditional: a logout racing this revokes once, and the audit row still says who ended it.
      await tx.consoleSession.updateMany({ where: { idHash: row.idHash, revokedAt: null }, data: { revokedAt: now } });
      await appendAudit(tx, {
        principal: input.principal,
        action: "session.revoke",
        tenantId: sessionOwner(row).tenantId,
        target: input.id,
        result: "ok",
        detail: { actor: sessionOwner(row).actor },
        ip: input.ip,
      });
      return { id: input.id, revoked: true as const };
    })
    .finally(authChanged);
}
