import type { Prisma } from "../db/generated/client";
import { getPool } from "../db/pool";
import { getPrisma, type PrismaClient } from "../db/prisma";
import type { StatementQueryable } from "../db/types";
import type { Principal } from "./auth-types";

/** Anything that can insert an audit row: the Prisma client, or the transaction client of the write being recorded. */
export type AuditWriter = Pick<PrismaClient, "auditLog"> | Pick<Prisma.TransactionClient, "auditLog">;

export interface AuditEntry {
  /** null for an unauthenticated attempt (a refused login). */
  principal: Principal | null;
  /** e.g. "effect.read", "effect.search", "effect.release", "audit.read", "login", "logout". */
  action: string;
  tenantId: string | null;
  /** What it was about, e.g. the effect key. */
  target?: string | null;
  /** ok | not_found | refused | conflict | … */
  result: string;
  detail?: Prisma.InputJsonValue | null;
  ip?: string | null;
}

/**
 * Appends one audit row. Call it with the transaction client of the write it records, so the row
 * commits (or rolls back) with that write. Rows are never updated or deleted: the app has no code
 * that would, and a trigger refuses UPDATE, DELETE and TRUNCATE on audit_log.
 */
export async function appendAudit(tx: AuditWriter, entry: AuditEntry): Promise<void> {
  await (tx as Pick<PrismaClient, "auditLog">).auditLog.create({
    data: {
      tokenId: entry.principal?.tokenId ?? null,
      actor: entry.principal?.actor ?? "anonymous",
      tenantId: entry.tenantId,
      action: entry.action,
      target: entry.target ?? null,
      result: entry.result,
      detail: entry.detail ?? undefined,
      ip: entry.ip ?? null,
    },
  });
}

// A read's row (reads have no write to share a transaction with): every key lookup and search
// writes one, so it is a named statement on the console's pool, the columns appendAudit writes,
// without the ORM round trip or the RETURNING of the whole row (bench:lookup, docs/benchmarks.md).
const INSERT_AUDIT = {
  name: "console_audit_insert",
  text: `INSERT INTO audit_log (token_id, actor, tenant_id, action, target, result, detail, ip)
         VALUES ($1::uuid, $2, $3, $4, $5, $6, $7::jsonb, $8)`,
};

/** appendAudit on its own, for reads: the row is committed before this resolves. */
export async function audit(entry: AuditEntry, db: StatementQueryable = getPool()): Promise<void> {
  await db.query({
    ...INSERT_AUDIT,
    values: [
      entry.principal?.tokenId ?? null,
      entry.principal?.actor ?? "anonymous",
      entry.tenantId,
      entry.action,
      entry.target ?? null,
      entry.result,
      entry.detail === undefined || entry.detail === null ? null : JSON.stringify(entry.detail),
      entry.ip ?? null,
    ],
  });
}

/** An audit row on its own (no write to pair it with), e.g. a logout. */
export function appendAuditAlone(entry: AuditEntry): Promise<void> {
  return appendAudit(getPrisma(), entry);
}
