import type { Scope } from "../auth/scope";
import type { AuditResponse, AuditRow } from "../contract/audit";
import { getPrisma, type PrismaClient } from "../db/prisma";
import { type AuditFilter, auditWhere } from "./audit-filter";
import { Keyset } from "./keyset";
import { redactOutcome } from "./redact";

/**
 * The audit log's order: newest first by id. The insert trigger draws id and sets `at`
 * (clock_timestamp) under the chain head's row lock, one row at a time, so id order is time order
 * and ties cannot happen; and Prisma reads times to the millisecond, which no exact cursor can hold.
 */
export const AUDIT_KEYSET = new Keyset("audit", [{ column: "id", type: "bigint" }]);

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
  const before = input.cursor ? BigInt(AUDIT_KEYSET.decode(input.cursor)[0] as string) : null;
  const rows = await db.auditLog.findMany({
    where: { ...auditWhere(scope, input), ...(before !== null ? { id: { lt: before } } : {}) },
    orderBy: { id: "desc" },
    take: input.limit + 1,
  });
  const page = AUDIT_KEYSET.page(
    rows.map((r) => ({ ...r, keyset_0: r.id })),
    input.limit,
  );
  return { entries: page.rows.map(auditRowOf), nextCursor: page.nextCursor };
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
