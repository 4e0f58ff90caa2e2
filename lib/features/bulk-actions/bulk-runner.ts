import { randomBytes } from "node:crypto";
import { appendAudit } from "../../auth/audit";
import type { Principal, Role } from "../../auth/auth-types";
import { loadConfig } from "../../config";
import { runLocked } from "../../db/locked-run";
import { getPrisma, type PrismaClient } from "../../db/prisma";
import { BULK_KINDS, consoleTable } from "./bulk-kinds";
import type { BulkActionKind } from "./bulk-types";

/**
 * Runs bulk actions in the background, in every console process (started from instrumentation-node.ts,
 * like the maintenance loop of lib/features/retention-and-gaps/schedule.ts). A process claims one runnable action
 * (queued, or running with an expired lease: its runner died) with FOR UPDATE SKIP LOCKED and a
 * lease, then applies its items in seq order from the first without an outcome — so a console
 * restarted mid-way resumes at its checkpoint. Each item is one transaction: the action row is
 * updated first, only while the lease is this process's and the action still runs (which also
 * locks the row against a concurrent cancel or a second runner), then the item is applied and its
 * outcome recorded. An item is applied in the transaction that marks it done, so it is applied
 * exactly once however the process dies. On a MySQL effects store an item is applied there, between
 * two transactions of ours, under a request id that makes a repeat harmless (applyElsewhere).
 */
const BULK_LEASE_MS = 30_000;
const BULK_POLL_MS = 2_000;
const BATCH = 100;

class LostLeaseError extends Error {}

interface ClaimedAction {
  id: string;
  kind: BulkActionKind;
  /** null: a platform action over every tenant. */
  tenant_id: string | null;
  token_id: string | null;
  actor: string;
  role: string;
  ip: string | null;
  note: string | null;
}

interface RunOptions {
  /** Who holds the lease: unique per process. */
  owner: string;
  leaseMs?: number;
  db?: PrismaClient;
  /** Called after each item commits (tests: to stop a process mid-way). */
  afterItem?: (item: { actionId: string; seq: number; outcome: string }) => void | Promise<void>;
}

/** Claims one runnable action and runs it to its end (or until cancelled or its lease is lost); the items applied, -1 when none was runnable. */
export async function runOneBulkAction(options: RunOptions): Promise<number> {
  const db = options.db ?? getPrisma();
  const leaseMs = Math.trunc(options.leaseMs ?? BULK_LEASE_MS);
  const progress = { applied: 0 };
  // The lease is the lock (held across processes and restarts), and the action's row is the run's.
  return runLocked<ClaimedAction, number>({
    start: () => claimAction(db, options.owner, leaseMs),
    busy: () => -1,
    steps: (action) => applyItems(db, action, options, leaseMs, progress),
    failed: async (_action, error) => {
      // Cancelled, or another process took over after our lease ran out: nothing of the failed item
      // committed; the action is theirs (or over). Anything else: the lease runs out and this or
      // another process resumes the action on a later pass.
      if (error instanceof LostLeaseError) return progress.applied;
      throw error;
    },
    // The lease ends with the action (finish) or runs out: nothing to let go.
    release: async () => {},
  });
}

/** One runnable action (queued, or running with an expired lease: its runner died), leased to `owner`; null when none. */
async function claimAction(db: PrismaClient, owner: string, leaseMs: number): Promise<ClaimedAction | null> {
  const actions = consoleTable("bulk_actions");
  const claimed = await db.$queryRawUnsafe<ClaimedAction[]>(
    `UPDATE ${actions} a
        SET state = 'running', lease_owner = $1, lease_until = now() + make_interval(secs => $2::float8 / 1000),
            started_at = coalesce(a.started_at, now())
      WHERE a.id = (SELECT id FROM ${actions}
                     WHERE state IN ('queued', 'running') AND (lease_until IS NULL OR lease_until < now())
                     ORDER BY created_at FOR UPDATE SKIP LOCKED LIMIT 1)
      RETURNING a.id::text, a.kind, a.tenant_id, a.token_id::text, a.actor, a.role, a.ip, a.note`,
    owner,
    leaseMs,
  );
  return claimed[0] ?? null;
}

/** Applies the action's items without an outcome, in seq order, each in its own transaction; the count applied. */
async function applyItems(
  db: PrismaClient,
  action: ClaimedAction,
  options: RunOptions,
  leaseMs: number,
  progress: { applied: number },
): Promise<number> {
  const actions = consoleTable("bulk_actions");
  // The person who started it: each item's audit row names them (and the action, in its detail).
  // (tokenId and actor reach an audit row, and the action's tenant where an item names none — a
  // finding gone meanwhile; a token deleted since leaves token_id null there too.)
  const principal: Principal = {
    tokenId: action.token_id as string,
    actor: action.actor,
    tenantId: action.tenant_id,
    role: action.role as Role,
  };
  const kind = BULK_KINDS[action.kind];
  for (;;) {
    const items = await db.bulkActionItem.findMany({
      where: { actionId: action.id, outcome: null },
      orderBy: { seq: "asc" },
      take: BATCH,
      select: { seq: true, key: true },
    });
    if (items.length === 0) {
      await finish(db, action, options.owner, principal);
      return progress.applied;
    }
    const renewed = await db.$executeRawUnsafe(
      `UPDATE ${actions} SET lease_until = now() + make_interval(secs => $3::float8 / 1000)
        WHERE id = $1::uuid AND lease_owner = $2 AND state = 'running'`,
      action.id,
      options.owner,
      leaseMs,
    );
    if (renewed === 0) return progress.applied;
    const elsewhere = kind.applyElsewhere?.() ?? null;
    for (const item of items) {
      const input = {
        principal,
        tenant: action.tenant_id,
        key: item.key,
        ip: action.ip,
        actionId: action.id,
        note: action.note,
      };
      const outcome = elsewhere
        ? await applyElsewhere(db, action, options.owner, leaseMs, item, (requestId) => elsewhere({ ...input, requestId }))
        : await db.$transaction(async (tx) => {
            const held = await tx.$executeRawUnsafe(
              // Each item extends the lease: a runner that keeps applying items keeps its action.
              `UPDATE ${actions} SET processed = processed + 1, lease_until = now() + make_interval(secs => $3::float8 / 1000)
                WHERE id = $1::uuid AND lease_owner = $2 AND state = 'running' AND lease_until > now()`,
              action.id,
              options.owner,
              leaseMs,
            );
            if (held === 0) throw new LostLeaseError();
            const result = await kind.apply(tx, input);
            const marked = await tx.bulkActionItem.updateMany({
              where: { actionId: action.id, seq: item.seq, outcome: null },
              data: { outcome: result, doneAt: new Date() },
            });
            if (marked.count !== 1) throw new LostLeaseError();
            if (result === "ok") await tx.bulkAction.update({ where: { id: action.id }, data: { applied: { increment: 1 } } });
            return result;
          });
      if (outcome === "ok") progress.applied += 1;
      await options.afterItem?.({ actionId: action.id, seq: item.seq, outcome });
    }
  }
}

/**
 * One item whose effect lives on another server (a MySQL effects store): no transaction spans it
 * and the console's PostgreSQL, so the item is applied between two of ours. The first checks the
 * lease (the action is still ours and running; a cancel committed before it stops the run); the
 * item is applied there under a request id fixed by the action and the item, so a run resumed after
 * a crash between the two repeats it harmlessly and learns what it did; the second records its
 * outcome — even when the lease was lost meanwhile (the item was applied: its row says so), then
 * stops. So at most the one item in flight is applied after a cancel commits, where the PostgreSQL
 * path applies none.
 */
async function applyElsewhere(
  db: PrismaClient,
  action: ClaimedAction,
  owner: string,
  leaseMs: number,
  item: { seq: number; key: string },
  apply: (requestId: string) => Promise<string>,
): Promise<string> {
  const actions = consoleTable("bulk_actions");
  const holds = (tx: Pick<PrismaClient, "$executeRawUnsafe">) =>
    tx.$executeRawUnsafe(
      `UPDATE ${actions} SET lease_until = now() + make_interval(secs => $3::float8 / 1000)
        WHERE id = $1::uuid AND lease_owner = $2 AND state = 'running' AND lease_until > now()`,
      action.id,
      owner,
      leaseMs,
    );
  if ((await holds(db)) === 0) throw new LostLeaseError();
  const result = await apply(`bulk:${action.id}:${item.seq}`);
  const held = await db.$transaction(async (tx) => {
    const marked = await tx.bulkActionItem.updateMany({
      where: { actionId: action.id, seq: item.seq, outcome: null },
      data: { outcome: result, doneAt: new Date() },
    });
    if (marked.count === 1)
      await tx.bulkAction.update({
        where: { id: action.id },
        data: { processed: { increment: 1 }, ...(result === "ok" ? { applied: { increment: 1 } } : {}) },
      });
    return (await holds(tx)) === 1 && marked.count === 1;
  });
  if (!held) throw new LostLeaseError();
  return result;
}

async function finish(db: PrismaClient, action: ClaimedAction, owner: string, principal: Principal): Promise<void> {
  await db.$transaction(async (tx) => {
    const done = await tx.bulkAction.updateMany({
      where: { id: action.id, leaseOwner: owner, state: "running" },
      data: { state: "done", finishedAt: new Date(), leaseOwner: null, leaseUntil: null },
    });
    if (done.count !== 1) return;
    const row = await tx.bulkAction.findUniqueOrThrow({ where: { id: action.id } });
    await appendAudit(tx, {
      principal,
      action: "bulk.finish",
      tenantId: action.tenant_id,
      target: action.id,
      result: "ok",
      detail: { kind: action.kind, total: row.total, processed: row.processed, applied: row.applied },
      ip: action.ip,
    });
  });
}

/** Runs every runnable action, one after another, until none is left. */
export async function runBulkActions(options: RunOptions): Promise<void> {
  while ((await runOneBulkAction(options)) !== -1) {
    // next action
  }
}

interface BulkRunnerState {
  timer: NodeJS.Timeout;
  running: boolean;
  lastError?: string;
}

declare global {
  var __onceboardBulkRunner: BulkRunnerState | undefined;
}

/**
 * The console's loop: every BULK_POLL_MS, run what is runnable (one pass at a time per process).
 * Idempotent per process; not started without a database, nor in a read-only console (which
 * writes nothing: another console runs the actions).
 */
export function startBulkRunner(options: { pollMs?: number; leaseMs?: number } = {}): void {
  const config = loadConfig();
  if (globalThis.__onceboardBulkRunner || !config.DATABASE_URL || config.CONSOLE_READ_ONLY) return;
  const owner = `console:${process.pid}:${randomBytes(4).toString("hex")}`;
  const state: BulkRunnerState = {
    running: false,
    timer: setInterval(() => {
      if (state.running) return;
      state.running = true;
      runBulkActions({ owner, leaseMs: options.leaseMs })
        .then(() => {
          state.lastError = undefined;
        })
        .catch((error: unknown) => {
          // The lease runs out and this or another process resumes the action on a later pass. Said
          // once per failure, not every pass: a console whose database is down would log it forever.
          const message = error instanceof Error ? error.message : String(error);
          if (message !== state.lastError) console.error(`onceboard: bulk actions paused: ${message}`);
          state.lastError = message;
        })
        .finally(() => {
          state.running = false;
        });
    }, options.pollMs ?? BULK_POLL_MS),
  };
  state.timer.unref();
  globalThis.__onceboardBulkRunner = state;
}
