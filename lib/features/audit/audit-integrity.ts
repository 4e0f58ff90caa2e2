import { type AuditChainCheckpoint, type AuditChainReport, verifyAuditChain } from "../../auth/audit-chain";
import type { Scope } from "../../auth/scope";
import { loadConfig } from "../../config";
import { getPool } from "../../db/pool";
import type { Queryable } from "../../db/types";
import type { AuditIntegrityView } from "./contract";

/**
 * Whether the audit log's hash chain holds, for the Audit log page, without walking a million rows
 * on every view. Each check walks at most ROWS_PER_CHECK rows (verifyAuditChain with a start and a
 * maxRows) from where the last one stopped, in this console process; rows already found to fit are
 * not walked again until a full re-walk, which starts at most once per FULL_WALK_EVERY_MS (in
 * slices, like the tail). The head is held against the last row on every check that reaches the
 * end, so rows cut off the end show at once; a row changed deep in the log shows by the next full
 * re-walk — or at once with `npm run audit -- verify`, which always walks everything.
 */
const ROWS_PER_CHECK = 50_000;
const FULL_WALK_EVERY_MS = 3_600_000;

interface IntegrityState {
  cursor?: AuditChainCheckpoint;
  rowsWalked: number;
  walkStartedAt: number;
  verdict: { ok: boolean; rows: number; problem?: AuditChainReport["problem"]; at: number } | null;
  inFlight?: Promise<void>;
}

declare global {
  var __onceboardAuditIntegrity: IntegrityState | undefined;
}

function state(): IntegrityState {
  globalThis.__onceboardAuditIntegrity ??= { rowsWalked: 0, walkStartedAt: 0, verdict: null };
  return globalThis.__onceboardAuditIntegrity;
}

async function step(s: IntegrityState, db: Queryable, now: number, rowsPerCheck: number): Promise<void> {
  if (s.walkStartedAt === 0 || now - s.walkStartedAt >= FULL_WALK_EVERY_MS) {
    s.cursor = undefined;
    s.rowsWalked = 0;
    s.walkStartedAt = now;
  }
  const report = await verifyAuditChain(db, { schema: loadConfig().ONCEBOARD_SCHEMA, start: s.cursor, maxRows: rowsPerCheck });
  if (!report.ok) {
    s.verdict = { ok: false, rows: s.rowsWalked + report.rows, problem: report.problem, at: now };
    // Walk again from the start next time: a broken chain is reported until it is whole again.
    s.walkStartedAt = 0;
    return;
  }
  s.cursor = report.last ?? s.cursor;
  s.rowsWalked += report.rows;
  if (!report.partial) s.verdict = { ok: true, rows: s.rowsWalked, at: now };
}

/**
 * The chain's state for a scope: a platform admin sees where it broke; a tenant admin only whether
 * it holds (the log spans every tenant, and its rows' numbers are not the tenant's to read).
 */
export async function auditIntegrity(
  scope: Scope,
  options: { db?: Queryable; now?: number; rowsPerCheck?: number } = {},
): Promise<AuditIntegrityView> {
  const s = state();
  if (!s.inFlight) {
    s.inFlight = step(s, options.db ?? getPool(), options.now ?? Date.now(), options.rowsPerCheck ?? ROWS_PER_CHECK).finally(
      () => {
        s.inFlight = undefined;
      },
    );
  }
  await s.inFlight;
  const verdict = s.verdict;
  if (verdict === null)
    return { state: "checking", rowsChecked: scope.platform ? s.rowsWalked : null, checkedAt: null, problem: null };
  return {
    state: verdict.ok ? "ok" : "broken",
    rowsChecked: scope.platform ? verdict.rows : null,
    checkedAt: new Date(verdict.at).toISOString(),
    problem: verdict.ok
      ? null
      : scope.platform
        ? (verdict.problem?.message ?? "the chain is broken")
        : "the chain is broken: a platform admin can see where",
  };
}
