import { ApiError } from "../api/errors";
import { loadConfig } from "../config";
import { getPrisma, type PrismaClient } from "../db/prisma";
import { appendAudit } from "./audit";
import type { Principal } from "./auth-types";
import { BULK_KINDS, matchStuckClaims } from "./bulk-kinds";
import type { BulkActionKind, BulkActionState, BulkActionView, BulkDryRunResponse, BulkReleaseFilter } from "./bulk-types";
import type { Scope } from "./scope";

/**
 * Bulk actions as people start, watch and cancel them (POST /api/v1/bulk/release, GET
 * /api/v1/bulk/{id}, POST /api/v1/bulk/{id}/cancel, the Keys page). Creating one fixes its items
 * and audits it in one transaction; lib/auth/bulk-runner.ts runs it. A tenant scope sees and
 * cancels its own tenant's actions only (another's answers 404).
 */
const SAMPLE_SIZE = 20;

export function bulkCap(): number {
  return loadConfig().BULK_ACTION_MAX_ITEMS;
}

function overCapMessage(cap: number): string {
  return `this filter matches more than ${cap} stuck claims (the cap per bulk action, BULK_ACTION_MAX_ITEMS): narrow it by key or job type`;
}

/** The dry run: how many stuck claims the filter matches (counted to cap + 1) and a sample. */
export async function dryRunBulkRelease(
  input: { scope: Scope; tenant?: string | null; filter: BulkReleaseFilter },
  db: PrismaClient = getPrisma(),
): Promise<BulkDryRunResponse> {
  const tenant = input.scope.narrow(input.tenant).oneTenant();
  const cap = bulkCap();
  const { count, sample } = await matchStuckClaims(db, { tenant, filter: input.filter, limit: cap + 1, sample: SAMPLE_SIZE });
  return { dryRun: true, tenant, count, cap, overCap: count > cap, sample };
}

/** Starts a bulk release of what the filter matches now: 409 past the cap or when nothing matches. */
export async function startBulkRelease(
  input: { scope: Scope; principal: Principal; ip: string | null; tenant?: string | null; filter: BulkReleaseFilter },
  db: PrismaClient = getPrisma(),
): Promise<BulkActionView> {
  const tenant = input.scope.narrow(input.tenant).oneTenant();
  const cap = bulkCap();
  const kind: BulkActionKind = "release_stuck_claims";
  const created = await db.$transaction(async (tx) => {
    const action = await tx.bulkAction.create({
      data: {
        kind,
        tenantId: tenant,
        filter: { q: input.filter.q, jobType: input.filter.jobType },
        state: "queued",
        total: 0,
        tokenId: input.principal.tokenId,
        actor: input.principal.actor,
        role: input.principal.role,
        ip: input.ip,
      },
    });
    const total = await BULK_KINDS[kind].snapshot(tx, { actionId: action.id, tenant, filter: input.filter, limit: cap + 1 });
    // Thrown, so the transaction (and the items it inserted) rolls back: an action past the cap never exists.
    if (total > cap) throw new ApiError("CONFLICT", overCapMessage(cap));
    if (total === 0) throw new ApiError("CONFLICT", "no stuck claim matches this filter: nothing to release");
    const row = await tx.bulkAction.update({ where: { id: action.id }, data: { total } });
    await appendAudit(tx, {
      principal: input.principal,
      action: "bulk.start",
      tenantId: tenant,
      target: action.id,
      result: "ok",
      detail: { kind, total, q: input.filter.q, jobType: input.filter.jobType },
      ip: input.ip,
    });
    return row;
  });
  return bulkActionView(created);
}

/** One action of the scope, or 404. */
export async function getBulkAction(scope: Scope, id: string, db: PrismaClient = getPrisma()): Promise<BulkActionView> {
  const row = await db.bulkAction.findFirst({ where: { id, ...(scope.tenant !== null ? { tenantId: scope.tenant } : {}) } });
  if (!row) throw new ApiError("NOT_FOUND", "no bulk action with this id");
  return bulkActionView(row);
}

/**
 * Cancels a queued or running action (audited): the runner applies no item after this commits —
 * each item's transaction re-reads the action's state under its row lock. Cancelling a finished
 * action answers it as it is.
 */
export async function cancelBulkAction(
  input: { scope: Scope; principal: Principal; ip: string | null; id: string },
  db: PrismaClient = getPrisma(),
): Promise<BulkActionView> {
  return db.$transaction(async (tx) => {
    const where = { id: input.id, ...(input.scope.tenant !== null ? { tenantId: input.scope.tenant } : {}) };
    const { count } = await tx.bulkAction.updateMany({
      where: { ...where, state: { in: ["queued", "running"] } },
      data: {
        state: "cancelled",
        finishedAt: new Date(),
        cancelledBy: input.principal.actor,
        leaseOwner: null,
        leaseUntil: null,
      },
    });
    const row = await tx.bulkAction.findFirst({ where });
    if (!row) throw new ApiError("NOT_FOUND", "no bulk action with this id");
    if (count === 1) {
      await appendAudit(tx, {
        principal: input.principal,
        action: "bulk.cancel",
        tenantId: row.tenantId,
        target: row.id,
        result: "ok",
        detail: { processed: row.processed, total: row.total },
        ip: input.ip,
      });
    }
    return bulkActionView(row);
  });
}

export function bulkActionView(row: {
  id: string;
  kind: string;
  tenantId: string;
  filter: unknown;
  state: string;
  total: number;
  processed: number;
  applied: number;
  actor: string;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  cancelledBy: string | null;
  error: string | null;
}): BulkActionView {
  const filter = (row.filter ?? {}) as Partial<BulkReleaseFilter>;
  return {
    id: row.id,
    kind: row.kind as BulkActionKind,
    tenant: row.tenantId,
    filter: { q: filter.q ?? null, jobType: filter.jobType ?? null },
    state: row.state as BulkActionState,
    total: row.total,
    processed: row.processed,
    applied: row.applied,
    actor: row.actor,
    createdAt: row.createdAt.toISOString(),
    startedAt: row.startedAt?.toISOString() ?? null,
    finishedAt: row.finishedAt?.toISOString() ?? null,
    cancelledBy: row.cancelledBy,
    error: row.error,
  };
}
