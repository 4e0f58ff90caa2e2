import type { Scope } from "../auth/scope";
import type { AuditResponse, AuditRow } from "../contract/audit";
import { getPrisma, type PrismaClient } from "../db/prisma";
import { type AuditFilter, auditWhere } from "./audit-filter";
import { redactOutcome } from "./redact";

/**
 * GET /api/v1/audit and the Audit log page: audit rows matching the filter (lib/console/audit-filter.ts:
 * a tenant scope's own rows only), newest first, keyset-paginated on id. Read through Prisma (an
 * admin table); the primary key serves the order.
 */
export async function listAudit(
  scope: Scope,
  input: AuditFilter & { cursor?: string; limit: number },
  db: Pick<PrismaClient, "auditLog"> = getPrisma(),
): Promise<AuditResponse> {
  let before: bigint | null = null;
  if (input.cursor) {
    if (!/^\d{1,19}$/.test(input.cursor)) {
      throw Object.assign(new Error("invalid query: cursor is not one this API returned"), { code: "INVALID_INPUT" });
    }
    before = BigInt(input.cursor);
  }
  const rows = await db.auditLog.findMany({
    where: { ...auditWhere(scope, input), ...(before !== null ? { id: { lt: before } } : {}) },
    // Newest first by id (a sequence: insertion order), so the cursor is exact.
    orderBy: { id: "desc" },
    take: input.limit + 1,
  });
  const page = rows.slice(0, input.limit);
  const last = page[page.length - 1];
  return {
    entries: page.map(auditRowOf),
    nextCursor: rows.length > input.limit && last ? last.id.toString() : null,
  };
}

/** A stored row as the API, the page and the export show it. */
export function auditRowOf(r: {
  id: bigint;
  at: Date;
  tokenId: string | null;
  actor: string;
  tenantId: string | null;
  action: string;
  target: string | null;
  result: string;
  detail: unknown;
  ip: string | null;
}): AuditRow {
  return {
    id: r.id.toString(),
    at: r.at.toISOString(),
    tokenId: r.tokenId,
    actor: r.actor,
    tenantId: r.tenantId,
    action: r.action,
    target: r.target,
    result: r.result,
    // Notes, filters and messages people and errors wrote: through the redaction hook like every
    // stored value the console shows or exports (the page, GET /api/v1/audit and the export).
    detail: r.detail === null || r.detail === undefined ? r.detail : redactOutcome(r.detail),
    ip: r.ip,
  };
}
