import type pg from "pg";
import type { Prisma } from "../db/generated/client";
import { getPool } from "../db/pool";
import type { PrismaClient } from "../db/prisma";
import type { Principal } from "./auth-types";

/** Anything that can insert an audit row: the Prisma client, or the transaction client of the write being recorded. */
type AuditWriter = Pick<PrismaClient, "auditLog"> | Pick<Prisma.TransactionClient, "auditLog">;

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
 * that would, a trigger refuses UPDATE, DELETE and TRUNCATE on audit_log, and the console's role
 * may only INSERT and SELECT it (lib/db/roles.ts). The insert trigger gives the row its place in
 * the hash chain (lib/auth/audit-chain.ts): appends serialise on the chain's head until the
 * transaction ends, so keep audited transactions short.
 */
export async function appendAudit(tx: AuditWriter, entry: AuditEntry): Promise<void> {
  await (tx as Pick<PrismaClient, "auditLog">).auditLog.create({ data: auditRow(entry), select: { id: true } });
}

function auditRow(entry: AuditEntry): Prisma.AuditLogUncheckedCreateInput {
  return {
    tokenId: entry.principal?.tokenId ?? null,
    actor: entry.principal?.actor ?? "anonymous",
    tenantId: entry.tenantId,
    action: entry.action,
    target: entry.target ?? null,
    result: entry.result,
    detail: entry.detail ?? undefined,
    ip: entry.ip ?? null,
  };
}

/**
 * The row of an audit, sent straight through the console's pool (whose search_path starts with the
 * library's schema): Prisma's create cost ~0.7 ms more at the median and ~1.5 ms more at p95 than
 * the statement itself (bench:lookup, docs/benchmarks.md), on the path of every audited read. Its
 * values are auditValues's, in the order of auditInsertSql's parameters. A read may carry the
 * same INSERT as a CTE of its own last statement (get-effect.ts), so the row commits if and only if
 * that read succeeds, in one round trip.
 */
export function auditInsertSql(
  firstParameter: number,
  /**
   * A jsonb expression over one aggregate row of the statement's own `from` (a count of what it
   * read), merged into the entry's detail. An INSERT … SELECT: Citus refuses a subquery in VALUES.
   */
  detailFrom?: { expression: string; from: string },
): string {
  const $ = (offset: number) => `$${firstParameter + offset}`;
  const columns = "INSERT INTO audit_log (token_id, actor, tenant_id, action, target, result, detail, ip)";
  const values = (detail: string) => `${$(0)}::uuid, ${$(1)}, ${$(2)}, ${$(3)}, ${$(4)}, ${$(5)}, ${detail}, ${$(7)}`;
  if (!detailFrom) return `${columns} VALUES (${values(`${$(6)}::jsonb`)})`;
  return `${columns} SELECT ${values(`coalesce(${$(6)}::jsonb, '{}'::jsonb) || ${detailFrom.expression}`)} FROM ${detailFrom.from}`;
}

/** An entry's column values, as auditInsertSql's parameters take them; the columns are auditRow's, so both paths write the same row. */
export function auditValues(entry: AuditEntry): unknown[] {
  const row = auditRow(entry);
  return [
    row.tokenId ?? null,
    row.actor,
    row.tenantId ?? null,
    row.action,
    row.target ?? null,
    row.result ?? "ok",
    row.detail === undefined ? null : JSON.stringify(row.detail),
    row.ip ?? null,
  ];
}

const INSERT_AUDIT = { name: "console_insert_audit", text: auditInsertSql(1) };

function isPool(db: AuditWriter | pg.Pool): db is pg.Pool {
  return !("auditLog" in db);
}

/**
 * An audit row on its own, for what has no write to share a transaction with (a read, a logout):
 * the row is committed before this resolves. By default on the console's pool; a Prisma client
 * (a test's, or a caller's own) writes it through Prisma.
 */
export async function audit(entry: AuditEntry, db: AuditWriter | pg.Pool = getPool()): Promise<void> {
  if (!isPool(db)) return appendAudit(db, entry);
  await db.query({ ...INSERT_AUDIT, values: auditValues(entry) });
}
