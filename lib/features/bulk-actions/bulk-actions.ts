import { ApiError } from "../../api/errors";
import { appendAudit } from "../../auth/audit";
import type { Principal } from "../../auth/auth-types";
import type { Scope } from "../../auth/scope";
import { loadConfig } from "../../config";
import { Keyset } from "../../console/keyset";
import { getPrisma, type PrismaClient } from "../../db/prisma";
import type { FindingSummary } from "../reconciliation/contract";
import { BULK_KINDS, type BulkKind, consoleTable } from "./bulk-kinds";
import type {
  BulkActionKind,
  BulkActionState,
  BulkFilters,
  BulkFindingsFilter,
  BulkItemStatus,
  BulkReleaseFilter,
} from "./bulk-types";
import type {
  BulkAcknowledgeDryRunResponse,
  BulkActionView,
  BulkDryRunResponse,
  BulkItemsResponse,
  StuckClaimSample,
} from "./contract";

/**
 * Bulk actions as people start, watch and cancel them (POST /api/v1/bulk/release and
 * /api/v1/bulk/acknowledge-findings, GET /api/v1/bulk/{id}, POST /api/v1/bulk/{id}/cancel, the
 * Keys and Reconciliation pages). Creating one fixes its items and audits it in one transaction;
 * lib/features/bulk-actions/bulk-runner.ts runs it. A tenant scope sees and cancels its own tenant's actions only
 * (another's, and a platform action over every tenant, answer 404).
 */
const SAMPLE_SIZE = 20;

function bulkCap(): number {
  return loadConfig().BULK_ACTION_MAX_ITEMS;
}

/** A dry run of any kind: how many items the filter matches (counted to cap + 1) and a sample. */
async function dryRun<K extends BulkActionKind>(
  kind: K,
  tenant: string | null,
  filter: BulkFilters[K],
  db: PrismaClient,
): Promise<{ dryRun: true; count: number; cap: number; overCap: boolean; sample: unknown[] }> {
  const cap = bulkCap();
  const { count, sample } = await BULK_KINDS[kind].match(db, { tenant, filter, limit: cap + 1, sample: SAMPLE_SIZE });
  return { dryRun: true, count, cap, overCap: count > cap, sample };
}

/**
 * The SHA-256 of an action's items, in one normal form (each key length-prefixed, in byte order):
 * two actions over the same items hash the same whatever order their snapshots wrote them in.
 */
const TARGET_HASH_SQL = (items: string) => `
  SELECT encode(sha256(convert_to(string_agg(length(key)::text || ':' || key, '' ORDER BY key COLLATE "C"), 'UTF8')), 'hex') AS hash
    FROM ${items} WHERE action_id = $1::uuid`;

/** An identical action that is live: bulk_actions_live_target_key refused a second one. */
class LiveTwinError extends Error {
  constructor(readonly targetHash: string) {
    super("a live bulk action holds the same target set");
  }
}

/** The index that keeps one live action per target set (prisma/migrations/20261206040000_*). */
const LIVE_TARGET_INDEX = "bulk_actions_live_target_key";

/** Whether `error` is Prisma's unique violation of LIVE_TARGET_INDEX (and not of another constraint). */
function violatesLiveTarget(error: unknown): boolean {
  const { code, meta } = error as { code?: unknown; meta?: unknown };
  return code === "P2002" && JSON.stringify(meta ?? null).includes(`"${LIVE_TARGET_INDEX}"`);
}

/** How many times a start is tried when its live twin finished between the refusal and the look-up. */
const TWIN_ATTEMPTS = 3;

/**
 * Starts an action of any kind on what the filter matches now: 409 past the cap, when nothing
 * matches, or while an action of the same kind over the same items is queued or running (the
 * database's bulk_actions_live_target_key decides, so concurrent identical starts cannot all pass).
 */
async function startBulkAction<K extends BulkActionKind>(
  input: { kind: K; principal: Principal; ip: string | null; tenant: string | null; filter: BulkFilters[K]; note?: string },
  db: PrismaClient,
): Promise<BulkActionView> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await createBulkAction(input, db);
    } catch (error) {
      if (!(error instanceof LiveTwinError)) throw error;
      const twin = await db.bulkAction.findFirst({
        where: { kind: input.kind, tenantId: input.tenant, targetHash: error.targetHash, state: { in: ["queued", "running"] } },
        select: { id: true, state: true, actor: true, total: true },
      });
      if (twin)
        throw new ApiError(
          "CONFLICT",
          `bulk action ${twin.id} (${twin.state}, started by ${twin.actor}) already covers these ${twin.total} items: watch or cancel it instead`,
        );
      if (attempt >= TWIN_ATTEMPTS) throw new ApiError("CONFLICT", "an identical bulk action was live a moment ago: try again");
    }
  }
}

async function createBulkAction<K extends BulkActionKind>(
  input: { kind: K; principal: Principal; ip: string | null; tenant: string | null; filter: BulkFilters[K]; note?: string },
  db: PrismaClient,
): Promise<BulkActionView> {
  const kind = BULK_KINDS[input.kind] as BulkKind<BulkFilters[K], unknown>;
  const cap = bulkCap();
  const filterJson = kind.filterJson(input.filter);
  let targetHash = "";
  try {
    const created = await db.$transaction(async (tx) => {
      const action = await tx.bulkAction.create({
        data: {
          kind: input.kind,
          tenantId: input.tenant,
          filter: filterJson,
          note: input.note ?? null,
          state: "queued",
          total: 0,
          tokenId: input.principal.tokenId,
          actor: input.principal.actor,
          role: input.principal.role,
          ip: input.ip,
        },
      });
      const total = await kind.snapshot(tx, { actionId: action.id, tenant: input.tenant, filter: input.filter, limit: cap + 1 });
      // Thrown, so the transaction (and the items it inserted) rolls back: an action past the cap never exists.
      if (total > cap) throw new ApiError("CONFLICT", kind.overCapMessage(cap));
      if (total === 0) throw new ApiError("CONFLICT", kind.nothingMessage);
      const [hashed] = await tx.$queryRawUnsafe<{ hash: string }[]>(
        TARGET_HASH_SQL(consoleTable("bulk_action_items")),
        action.id,
      );
      targetHash = hashed?.hash ?? "";
      // A concurrent identical start waits here on the unique index until this commits, then fails it.
      const row = await tx.bulkAction.update({ where: { id: action.id }, data: { total, targetHash } });
      await appendAudit(tx, {
        principal: input.principal,
        action: "bulk.start",
        tenantId: input.tenant,
        target: action.id,
        result: "ok",
        // The filter nested: its own `kind` (a finding kind) must not shadow the action's.
        detail: { kind: input.kind, total, filter: filterJson, ...(input.note !== undefined ? { note: input.note } : {}) },
        ip: input.ip,
      });
      return row;
    });
    return bulkActionView(created);
  } catch (error) {
    if (targetHash && violatesLiveTarget(error)) throw new LiveTwinError(targetHash);
    throw error;
  }
}

/** The dry run of a bulk release: how many stuck claims the filter matches (counted to cap + 1) and a sample. */
export async function dryRunBulkRelease(
  input: { scope: Scope; tenant?: string | null; filter: BulkReleaseFilter },
  db: PrismaClient = getPrisma(),
): Promise<BulkDryRunResponse> {
  const tenant = input.scope.narrow(input.tenant).oneTenant();
  const counted = await dryRun("release_stuck_claims", tenant, input.filter, db);
  return { ...counted, tenant, sample: counted.sample as StuckClaimSample[] };
}

/** Starts a bulk release of what the filter matches now: 409 past the cap or when nothing matches. */
export async function startBulkRelease(
  input: { scope: Scope; principal: Principal; ip: string | null; tenant?: string | null; filter: BulkReleaseFilter },
  db: PrismaClient = getPrisma(),
): Promise<BulkActionView> {
  const tenant = input.scope.narrow(input.tenant).oneTenant();
  return startBulkAction(
    { kind: "release_stuck_claims", principal: input.principal, ip: input.ip, tenant, filter: input.filter },
    db,
  );
}

/**
 * The dry run of a bulk acknowledge: how many open findings the Reconciliation page's filter
 * matches and a sample. A platform scope that names no tenant counts every tenant's (and the
 * tenantless ones), as the page lists them.
 */
export async function dryRunBulkAcknowledge(
  input: { scope: Scope; tenant?: string | null; filter: BulkFindingsFilter },
  db: PrismaClient = getPrisma(),
): Promise<BulkAcknowledgeDryRunResponse> {
  const tenant = input.scope.narrow(input.tenant).tenant;
  const counted = await dryRun("acknowledge_findings", tenant, input.filter, db);
  return { ...counted, tenant, sample: counted.sample as FindingSummary[] };
}

/** Starts acknowledging, with one note, every open finding the filter matches now: 409 past the cap or when none matches. */
export async function startBulkAcknowledge(
  input: {
    scope: Scope;
    principal: Principal;
    ip: string | null;
    tenant?: string | null;
    filter: BulkFindingsFilter;
    note: string;
  },
  db: PrismaClient = getPrisma(),
): Promise<BulkActionView> {
  const tenant = input.scope.narrow(input.tenant).tenant;
  return startBulkAction(
    { kind: "acknowledge_findings", principal: input.principal, ip: input.ip, tenant, filter: input.filter, note: input.note },
    db,
  );
}

/** One action of the scope, or 404. */
export async function getBulkAction(scope: Scope, id: string, db: PrismaClient = getPrisma()): Promise<BulkActionView> {
  const row = await db.bulkAction.findFirst({ where: { id, ...(scope.tenant !== null ? { tenantId: scope.tenant } : {}) } });
  if (!row) throw new ApiError("NOT_FOUND", "no bulk action with this id");
  return bulkActionView(row);
}

/**
 * A bulk action's items in the order they run: by seq, unique within the action and fixed when it
 * was created (the runner writes an item's outcome, never its place), so pages neither repeat nor
 * skip while the action runs.
 */
export const BULK_ITEM_KEYSET = new Keyset("bulk-items", [{ column: "seq", type: "bigint" }], "asc");

/**
 * GET /api/v1/bulk/{id}/items and the bulk progress panel: one action of the scope's items, a page
 * at a time (404 as getBulkAction for another tenant's action or none).
 */
export async function listBulkItems(
  scope: Scope,
  id: string,
  page: { cursor?: string; limit: number },
  db: Pick<PrismaClient, "bulkAction" | "bulkActionItem"> = getPrisma(),
): Promise<BulkItemsResponse> {
  // seq is an integer column: a (valid bigint) cursor past its range, clamped, names the same rows.
  const after = page.cursor ? clampToInteger(BigInt(BULK_ITEM_KEYSET.decode(page.cursor)[0] as string)) : null;
  const action = { id, ...(scope.tenant !== null ? { tenantId: scope.tenant } : {}) };
  const [found, rows] = await Promise.all([
    db.bulkAction.findFirst({ where: action, select: { id: true } }),
    db.bulkActionItem.findMany({
      where: { actionId: id, action, ...(after !== null ? { seq: { gt: after } } : {}) },
      orderBy: { seq: "asc" },
      take: page.limit + 1,
    }),
  ]);
  if (!found) throw new ApiError("NOT_FOUND", "no bulk action with this id");
  const shown = BULK_ITEM_KEYSET.page(
    rows.map((r) => ({ ...r, keyset_0: r.seq })),
    page.limit,
  );
  return {
    items: shown.rows.map((r) => ({
      seq: r.seq,
      key: r.key,
      status: bulkItemStatus(r.outcome),
      // Any outcome but "ok" is the refusal's reason (bulk-kinds.ts apply).
      error: r.outcome !== null && r.outcome !== "ok" ? r.outcome : null,
      doneAt: r.doneAt?.toISOString() ?? null,
    })),
    nextCursor: shown.nextCursor,
  };
}

const INTEGER_MAX = 2_147_483_647n;
const INTEGER_MIN = -2_147_483_648n;

function clampToInteger(value: bigint): number {
  return Number(value > INTEGER_MAX ? INTEGER_MAX : value < INTEGER_MIN ? INTEGER_MIN : value);
}

function bulkItemStatus(outcome: string | null): BulkItemStatus {
  if (outcome === null) return "pending";
  return outcome === "ok" ? "applied" : "refused";
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

function bulkActionView(row: {
  id: string;
  kind: string;
  tenantId: string | null;
  filter: unknown;
  note: string | null;
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
  // The filter as filterJson wrote it: text or null per field (anything else is not ours to show).
  const filter: Record<string, string | null> = {};
  if (row.filter && typeof row.filter === "object" && !Array.isArray(row.filter)) {
    for (const [name, value] of Object.entries(row.filter)) {
      if (typeof value === "string" || value === null) filter[name] = value;
    }
  }
  return {
    id: row.id,
    kind: row.kind as BulkActionKind,
    tenant: row.tenantId,
    filter,
    note: row.note,
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
