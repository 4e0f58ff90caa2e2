import type pg from "pg";
import { effectsInConsoleDatabase } from "../../console/effects-store";
import { NotOnThisEffectsStoreError } from "../../console/errors";
import type { Prisma } from "../../db/generated/client";
import { getPrisma, type PrismaClient } from "../../db/prisma";
import { formatDuration } from "../../format";
import { type LiveWorker, readLiveWorkers } from "../../idempotency/admin";
import type { RetentionSettingsView, SettingsUpdateView } from "./contract";
import { type RetentionBlocker, RetentionError } from "./errors";
import { getObservedMaxGapSeconds, getRetentionSettings } from "./get-retention";
import { maintenancePool } from "./maintenance-pool";
import type { PartitionIntervalName } from "./retention-types";

export interface RetentionSettingsInput {
  retentionDays?: number;
  maxRetryWindowDays?: number;
  partitionInterval?: PartitionIntervalName;
  premakeCount?: number;
  /** Lower the retention below a live worker's declared retry window anyway (needs a reason). */
  force?: boolean;
  reason?: string;
  /** Change only if the settings still hold these values (a confirmed preview); else RETENTION_STALE. */
  expect?: { retentionDays: number; maxRetryWindowDays: number };
}

/**
 * Writes one audit row inside the settings transaction. The route binds the principal and IP
 * (lib/auth appendAudit); the CLI writes its own actor. Kept as a parameter so this file does not
 * depend on how callers authenticate.
 */
export type RetentionAudit = (
  tx: Prisma.TransactionClient,
  entry: { action: string; target: string; result: string; detail: Prisma.InputJsonValue },
) => Promise<void>;

interface UpdateDeps {
  prisma?: PrismaClient;
  pool?: pg.Pool;
  now?: Date;
  /** Who changed it (retention_settings.updated_by). */
  actor: string;
  audit: RetentionAudit;
  /** The audit row's action (default retention.settings); the advice's Apply names itself. */
  auditAction?: string;
  /** More for the audit row's detail (what the advice said). */
  auditDetail?: Record<string, Prisma.InputJsonValue>;
}

function staleSettings(expected: { retentionDays: number; maxRetryWindowDays: number }): RetentionError {
  return new RetentionError(
    "RETENTION_STALE",
    `the retention settings changed since this change was reviewed (it expected a retention of ${expected.retentionDays} d and a retry window of ${expected.maxRetryWindowDays} d): review it again`,
  );
}

const DAY = 86_400;

/** The settings a change is checked on: the four the settings row holds. */
type RetentionSettingsValues = Pick<
  RetentionSettingsView,
  "retentionDays" | "maxRetryWindowDays" | "partitionInterval" | "premakeCount"
>;

export const settingsValues = (v: RetentionSettingsView): RetentionSettingsValues => ({
  retentionDays: v.retentionDays,
  maxRetryWindowDays: v.maxRetryWindowDays,
  partitionInterval: v.partitionInterval,
  premakeCount: v.premakeCount,
});

/** A change no force can make: the retention below the settings' own retry window. */
export function invalidRetention(after: RetentionSettingsValues, changesRetryWindow: boolean): RetentionError | null {
  if (after.retentionDays >= after.maxRetryWindowDays) return null;
  const blockers: RetentionBlocker[] = changesRetryWindow
    ? [
        {
          setting: "maxRetryWindowDays",
          message: `must be ${after.retentionDays} or less for a retention of ${after.retentionDays} d`,
        },
        {
          setting: "retentionDays",
          message: `or must be ${after.maxRetryWindowDays} or more for a retry window of ${after.maxRetryWindowDays} d`,
        },
      ]
    : [
        {
          setting: "maxRetryWindowDays",
          message: `lower it first to ${after.retentionDays} or less (now ${after.maxRetryWindowDays}), once no worker retries for longer`,
        },
      ];
  // Say what must change, in the words of the change that would pass.
  return new RetentionError(
    "RETENTION_INVALID",
    `retention (${after.retentionDays}d) must be at least the fleet's max retry window (${after.maxRetryWindowDays}d): ` +
      (changesRetryWindow
        ? `set the retry window to ${after.retentionDays}d or less, or the retention to ${after.maxRetryWindowDays}d or more`
        : `lower the retry window first (maxRetryWindowDays ${after.retentionDays} or less; CLI: --max-retry-window-days ${after.retentionDays}), once no worker retries for longer`),
    blockers,
  );
}

/**
 * A change only force with a reason may make: the retention below the largest retry window a live
 * worker declared (a late replay of that worker's could run twice). Null when no worker is in the way.
 */
export function liveWindowRefusal(after: RetentionSettingsValues, workers: LiveWorker[]): RetentionError | null {
  const largest = workers.reduce((max, w) => (w.maxRetryWindowSeconds > max.maxRetryWindowSeconds ? w : max), {
    workerId: "",
    maxRetryWindowSeconds: 0,
  });
  if (after.retentionDays * DAY >= largest.maxRetryWindowSeconds) return null;
  const keepDays = Math.ceil(largest.maxRetryWindowSeconds / DAY);
  const message = `retention ${formatDuration(after.retentionDays * DAY)} is below the ${formatDuration(largest.maxRetryWindowSeconds)} retry window declared by live worker ${largest.workerId}: a late replay could run twice`;
  return new RetentionError(
    "RETENTION_REFUSED",
    `${message}; lower that worker's retry window first (and restart it), keep the retention at ${formatDuration(keepDays * DAY)} or more, or pass force with a reason to do it anyway`,
    [
      {
        setting: "workerMaxRetryWindow",
        message: `worker ${largest.workerId} declares ${formatDuration(largest.maxRetryWindowSeconds)}: lower its maxRetryWindow to ${formatDuration(after.retentionDays * DAY)} or less and restart it`,
      },
      { setting: "retentionDays", message: `or keep it at ${keepDays} or more` },
    ],
  );
}

/**
 * Changes the retention settings. Lowering the retention below the largest retry window a live
 * worker declared is refused unless forced with a reason (audited); below the observed maximum
 * redelivery gap it is allowed with a warning. Every attempt, refused ones included, is audited.
 * With `expect`, the change is made only if the settings still hold those values (checked by the
 * UPDATE itself): a change confirmed against a preview fails with RETENTION_STALE if another
 * change landed in between.
 */
/**
 * On a MySQL effects store the settings row is there (the workers read it there) and the audit log
 * in the console's PostgreSQL: no transaction spans both, so a change could commit without its
 * audit row. The console refuses rather than write one without the other.
 */
export function refuseSettingsChangeOnMysql(deps: { pool?: unknown }): void {
  if (deps.pool === undefined && !effectsInConsoleDatabase())
    throw new NotOnThisEffectsStoreError(
      "Changing the retention settings",
      "the settings live in the MySQL store and the audit log in PostgreSQL, and no transaction spans both, so a change could land without its audit row; change onceboard.retention_settings there with your own change process",
    );
}

export async function updateRetentionSettings(input: RetentionSettingsInput, deps: UpdateDeps): Promise<SettingsUpdateView> {
  refuseSettingsChangeOnMysql(deps);
  const prisma = deps.prisma ?? getPrisma();
  const pool = deps.pool ?? maintenancePool();
  const now = deps.now ?? new Date();
  const before = await getRetentionSettings(prisma);
  const after: RetentionSettingsView = {
    ...before,
    retentionDays: input.retentionDays ?? before.retentionDays,
    maxRetryWindowDays: input.maxRetryWindowDays ?? before.maxRetryWindowDays,
    partitionInterval: input.partitionInterval ?? before.partitionInterval,
    premakeCount: input.premakeCount ?? before.premakeCount,
  };
  const invalid = invalidRetention(after, input.maxRetryWindowDays !== undefined);
  if (invalid) throw invalid;
  const workers = await readLiveWorkers(pool, now);
  const warnings: string[] = [];
  const detail = {
    before: settingsValues(before),
    after: settingsValues(after),
    force: input.force ?? false,
    reason: input.reason ?? null,
  };
  const refusal = liveWindowRefusal(after, workers);
  if (refusal) {
    if (!input.force || !input.reason || input.reason.trim().length < 3) {
      await prisma.$transaction((tx) =>
        deps.audit(tx, {
          action: deps.auditAction ?? "retention.settings",
          target: "retention_settings",
          result: "refused",
          detail: { ...detail, refused: refusal.message },
        }),
      );
      throw refusal;
    }
    warnings.push(`forced: ${refusal.message.split("; ")[0]}`);
  }
  const gap = await getObservedMaxGapSeconds(pool, null);
  if (gap !== null && after.retentionDays * DAY < gap) {
    warnings.push(
      `retention ${formatDuration(after.retentionDays * 86_400)} is below the largest redelivery gap observed (${formatDuration(Math.ceil(gap))})`,
    );
  }
  const data = {
    retentionDays: after.retentionDays,
    maxRetryWindowDays: after.maxRetryWindowDays,
    partitionInterval: after.partitionInterval,
    premakeCount: after.premakeCount,
    updatedBy: deps.actor,
    updatedAt: now,
  };
  const expected = input.expect;
  try {
    await prisma.$transaction(async (tx) => {
      if (expected) {
        const changed = await tx.retentionSettings.updateMany({ where: { id: 1, ...expected }, data });
        // No row yet means the defaults: create it, and a concurrent creator's row fails the key.
        const unchanged = changed.count === 0;
        const defaultsExpected =
          unchanged &&
          before.updatedAt === null &&
          expected.retentionDays === before.retentionDays &&
          expected.maxRetryWindowDays === before.maxRetryWindowDays &&
          (await tx.retentionSettings.count({ where: { id: 1 } })) === 0;
        if (defaultsExpected) await tx.retentionSettings.create({ data: { id: 1, ...data } });
        else if (unchanged) throw staleSettings(expected);
      } else {
        await tx.retentionSettings.upsert({ where: { id: 1 }, create: { id: 1, ...data }, update: data });
      }
      await deps.audit(tx, {
        action: deps.auditAction ?? "retention.settings",
        target: "retention_settings",
        result: input.force && warnings.length > 0 ? "forced" : "ok",
        detail: { ...detail, warnings, ...deps.auditDetail },
      });
    });
  } catch (error) {
    // P2002: the row another change created between the count and the create.
    if (expected && (error as { code?: unknown }).code === "P2002") throw staleSettings(expected);
    throw error;
  }
  return { settings: await getRetentionSettings(prisma), warnings };
}
