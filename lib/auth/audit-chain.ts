import { createHash } from "node:crypto";
import type { Queryable } from "../db/types";
import { schemaNameOf } from "../idempotency/admin";

/**
 * The audit log's hash chain, checked from outside the database. The insert trigger
 * (prisma/migrations/20261203010000_audit_chain) gives each row seq = previous + 1 and
 * hash = sha256(previous hash || canonical row); this recomputes every hash here, in Node, from the
 * stored fields, so a superuser who turned the triggers off, edited rows or replaced the hashing
 * function in the database is still caught at the first row that no longer fits.
 */

/** The previous hash of the first row. */
const AUDIT_CHAIN_GENESIS = "0".repeat(64);

type AuditChainBreak = "changed" | "removed" | "out_of_order";

export interface AuditChainReport {
  ok: boolean;
  /** Rows checked (all of them when ok, or all after `start`). */
  rows: number;
  /** Stopped at `maxRows` before the end: ok so far, the rest (and the head) unchecked. */
  partial?: boolean;
  /** The last row that fits: where a later check may start. */
  last?: AuditChainCheckpoint;
  /** The first break: what kind, where (the row's seq and id, when there is a row) and a sentence saying so. */
  problem?: { kind: AuditChainBreak; seq: number | null; id: string | null; message: string };
}

interface AuditChainRow {
  seq: string;
  id: string;
  /** `at` in microseconds since the epoch (its text would follow the session's TimeZone). */
  at_us: string;
  token_id: string | null;
  actor: string;
  tenant_id: string | null;
  action: string;
  target: string | null;
  /** detail as PostgreSQL prints jsonb (its canonical text), or null. */
  detail: string | null;
  ip: string | null;
  result: string;
  hash: string;
}

/** The text jsonb_build_array(seq, id, at_us, token_id, actor, tenant_id, action, target, detail, ip, result) prints. */
function canonicalAuditRow(row: Omit<AuditChainRow, "hash">): string {
  // JSON.stringify escapes a string exactly as PostgreSQL's jsonb output does (", \, \b \f \n \r \t, \u00xx).
  const text = (value: string | null) => (value === null ? "null" : JSON.stringify(value));
  return `[${[
    row.seq,
    row.id,
    row.at_us,
    text(row.token_id),
    text(row.actor),
    text(row.tenant_id),
    text(row.action),
    text(row.target),
    row.detail ?? "null",
    text(row.ip),
    text(row.result),
  ].join(", ")}]`;
}

function auditRowHash(previousHash: string, row: Omit<AuditChainRow, "hash">): string {
  return createHash("sha256")
    .update(previousHash + canonicalAuditRow(row), "utf8")
    .digest("hex");
}

/** A row already found to fit the chain: seq, id and hash. */
export interface AuditChainCheckpoint {
  seq: number;
  id: string;
  hash: string;
}

/**
 * Walks the whole log in seq order and stops at the first row that was changed, removed or
 * inserted out of order; then holds the last row against the chain's head, which catches rows cut
 * off the end or appended around the trigger. With `start`, the walk begins after that checkpoint
 * (rows up to it are taken as checked); with `maxRows`, it stops after that many rows (partial).
 */
export async function verifyAuditChain(
  db: Queryable,
  options: { schema?: string; pageSize?: number; start?: AuditChainCheckpoint; maxRows?: number } = {},
): Promise<AuditChainReport> {
  const schema = schemaNameOf(options.schema);
  const pageSize = Math.max(1, Math.trunc(options.pageSize ?? 1000));
  let expectedSeq = options.start ? options.start.seq + 1 : 1;
  let previousHash = options.start?.hash ?? AUDIT_CHAIN_GENESIS;
  let previousId: bigint | null = options.start ? BigInt(options.start.id) : null;
  let rows = 0;
  const checkpoint = (): AuditChainCheckpoint | undefined =>
    previousId === null ? undefined : { seq: expectedSeq - 1, id: previousId.toString(), hash: previousHash };
  const fail = (kind: AuditChainBreak, row: AuditChainRow | null, message: string): AuditChainReport => ({
    ok: false,
    rows,
    problem: { kind, seq: row ? Number(row.seq) : null, id: row?.id ?? null, message },
  });
  for (;;) {
    const page = await db.query<AuditChainRow>(
      `SELECT seq::text, id::text, (extract(epoch FROM at) * 1000000)::bigint::text AS at_us, token_id::text, actor,
              tenant_id, action, target, detail::text, ip, result, hash
         FROM ${schema}.audit_log a
        WHERE a.seq >= $1
        ORDER BY a.seq, a.id
        LIMIT ${pageSize}`,
      [expectedSeq],
    );
    for (const row of page.rows) {
      const seq = Number(row.seq);
      const where = `row seq ${row.seq} (id ${row.id})`;
      if (seq > expectedSeq) {
        const gap = seq - 1 === expectedSeq ? `row seq ${expectedSeq} is` : `rows seq ${expectedSeq}–${seq - 1} are`;
        return fail("removed", row, `${gap} missing (removed): the chain breaks before ${where}`);
      }
      if (seq < expectedSeq) {
        return fail("out_of_order", row, `${where} repeats seq ${row.seq}: inserted out of order`);
      }
      if (previousId !== null && BigInt(row.id) <= previousId) {
        return fail("out_of_order", row, `${where} has an id below the row before it: inserted out of order`);
      }
      if (auditRowHash(previousHash, row) !== row.hash) {
        return fail("changed", row, `${where} does not match its hash: it was changed, or inserted out of order`);
      }
      previousHash = row.hash;
      previousId = BigInt(row.id);
      expectedSeq += 1;
      rows += 1;
      if (options.maxRows !== undefined && rows >= options.maxRows) return { ok: true, rows, partial: true, last: checkpoint() };
    }
    if (page.rows.length < pageSize) break;
  }
  const head = (await db.query<{ seq: string; hash: string }>(`SELECT seq::text, hash FROM ${schema}.audit_chain_head`)).rows;
  const last = expectedSeq - 1;
  if (head.length !== 1 || !head[0]) {
    return fail("changed", null, `the chain head (${schema}.audit_chain_head) has ${head.length} rows instead of 1`);
  }
  const headSeq = Number(head[0].seq);
  if (headSeq > last) {
    const gap = headSeq === last + 1 ? `row seq ${headSeq} is` : `rows seq ${last + 1}–${headSeq} are`;
    return fail("removed", null, `${gap} missing (removed from the end): the chain head is at seq ${headSeq}`);
  }
  if (headSeq < last) {
    return fail(
      "out_of_order",
      null,
      `rows past seq ${headSeq} were appended around the trigger: the chain head is at seq ${headSeq}`,
    );
  }
  if (head[0].hash !== previousHash) {
    return fail("changed", null, `the chain head's hash does not match row seq ${last}: the head or the last row was changed`);
  }
  return { ok: true, rows, last: checkpoint() };
}
