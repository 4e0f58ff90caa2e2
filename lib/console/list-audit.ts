import type { Scope } from "../auth/scope";
import type { AuditResponse } from "../contract/audit";
import { getPrisma, type PrismaClient } from "../db/prisma";

/**
 * GET /api/v1/audit: audit rows newest first, keyset-paginated on id: a tenant scope's own rows
 * whatever `tenant` says; a platform scope's rows of `tenant`, or every row. Read through Prisma (an
 * admin table); the primary key serves the order.
 */
export async function listAudit(
  scope: Scope,
  input: { tenant?: string | null; from?: Date; to?: Date; cursor?: string; limit: number },
  db: Pick<PrismaClient, "auditLog"> = getPrisma(),
): Promise<AuditResponse> {
  const tenant = scope.narrow(input.tenant).tenant;
  let before: bigint | null = null;
  if (input.cursor) {
    if (!/^\d{1,19}$/.test(input.cursor)) {
      throw Object.assign(new Error("invalid query: cursor is not one this API returned"), { code: "INVALID_INPUT" });
    }
    before = BigInt(input.cursor);
  }
  const rows = await db.auditLog.findMany({
    where: {
      ...(tenant !== null ? { tenantId: tenant } : {}),
      at: { ...(input.from ? { gte: input.from } : {}), ...(input.to ? { lt: input.to } : {}) },
      ...(before !== null ? { id: { lt: before } } : {}),
    },
    // Newest first by id (a sequence: insertion order), so the cursor is exact.
    orderBy: { id: "desc" },
    take: input.limit + 1,
  });
  const page = rows.slice(0, input.limit);
  const last = page[page.length - 1];
  return {
    entries: page.map((r) => ({
      id: r.id.toString(),
      at: r.at.toISOString(),
      tokenId: r.tokenId,
      actor: r.actor,
      tenantId: r.tenantId,
      action: r.action,
      target: r.target,
      result: r.result,
      detail: r.detail,
      ip: r.ip,
    })),
    nextCursor: rows.length > input.limit && last ? last.id.toString() : null,
  };
}
