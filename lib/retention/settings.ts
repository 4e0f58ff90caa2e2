import type pg from "pg";
import type { Prisma } from "../db/generated/client";
import { getPrisma, type PrismaClient } from "../db/prisma";
import { formatDuration } from "../format";
import { readLiveWorkers } from "../idempotency/admin";
import { RetentionError } from "./errors";
import { getObservedMaxGapSeconds, getRetentionSettings } from "./get-retention";
import { maintenancePool } from "./maintenance-pool";
import type { PartitionIntervalName, RetentionSettingsView, SettingsUpdateView } from "./retention-types";

export interface RetentionSettingsInput {
  retentionDays?: number;
  maxRetryWindowDays?: number;
  partitionInterval?: PartitionIntervalName;
  premakeCount?: number;
  /** Lower the retention below a live worker's declared retry window anyway (needs a reason). */
  force?: boolean;
  reason?: string;
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

export interface UpdateDeps {
  prisma?: PrismaClient;
  pool?: pg.Pool;
  now?: Date;
  /** Who changed it (retention_settings.updated_by). */
  actor: string;
  audit: RetentionAudit;
}

const DAY = 86_400;

/**
 * Changes the retention settings. Lowering the retention below the largest retry window a live
 * worker declared is refused unless forced with a reason (audited); below the observed maximum
 * redelivery gap it is allowed with a warning. Every attempt, refused ones included, is audited.
 */
export async function updateRetentionSettings(input: RetentionSettingsInput, deps: UpdateDeps): Promise<SettingsUpdateView> {
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
  if (after.retentionDays < after.maxRetryWindowDays) {
    // Say what must change, in the words of the change that would pass.
    const lowering = input.maxRetryWindowDays === undefined;
    throw new RetentionError(
      "RETENTION_INVALID",
      `retention (${after.retentionDays}d) must be at least the fleet's max retry window (${after.maxRetryWindowDays}d): ` +
        (lowering
          ? `lower the retry window first (max retry window ${after.retentionDays}d or less, e.g. --max-retry-window-days ${after.retentionDays}), once no worker retries for longer`
          : `set the retry window to ${after.retentionDays}d or less, or the retention to ${after.maxRetryWindowDays}d or more`),
    );
  }
  const workers = await readLiveWorkers(pool, now);
  const largest = workers.reduce((max, w) => (w.maxRetryWindowSeconds > max.maxRetryWindowSeconds ? w : max), {
    workerId: "",
    maxRetryWindowSeconds: 0,
  });
  const warnings: string[] = [];
  const pick = (v: RetentionSettingsView) => ({
    retentionDays: v.retentionDays,
    maxRetryWindowDays: v.maxRetryWindowDays,
    partitionInterval: v.partitionInterval,
    premakeCount: v.premakeCount,
  });
  const detail = { before: pick(before), after: pick(after), force: input.force ?? false, reason: input.reason ?? null };
  if (after.retentionDays * DAY < largest.maxRetryWindowSeconds) {
    const message = `retention ${formatDuration(after.retentionDays * 86_400)} is below the ${formatDuration(largest.maxRetryWindowSeconds)} retry window declared by live worker ${largest.workerId}: a late replay could run twice`;
    if (!input.force || !input.reason || input.reason.trim().length < 3) {
      await prisma.$transaction((tx) =>
        deps.audit(tx, {
          action: "retention.settings",
          target: "retention_settings",
          result: "refused",
          detail: { ...detail, refused: message },
        }),
      );
      throw new RetentionError(
        "RETENTION_REFUSED",
        `${message}; lower that worker's retry window first (and restart it), keep the retention at ${formatDuration(Math.ceil(largest.maxRetryWindowSeconds / DAY) * DAY)} or more, or pass force with a reason to do it anyway`,
      );
    }
    warnings.push(`forced: ${message}`);
  }
  const gap = await getObservedMaxGapSeconds(pool, null);
  if (gap !== null && after.retentionDays * DAY < gap) {
    warnings.push(
      `retention ${formatDuration(after.retentionDays * 86_400)} is below the largest redelivery gap observed (${formatDuration(Math.ceil(gap))})`,
    );
  }
  await prisma.$transaction(async (tx) => {
    await tx.retentionSettings.upsert({
      where: { id: 1 },
      create: {
        id: 1,
        retentionDays: after.retentionDays,
        maxRetryWindowDays: after.maxRetryWindowDays,
        partitionInterval: after.partitionInterval,
        premakeCount: after.premakeCount,
        updatedBy: deps.actor,
        updatedAt: now,
      },
      update: {
        retentionDays: after.retentionDays,
        maxRetryWindowDays: after.maxRetryWindowDays,
        partitionInterval: after.partitionInterval,
        premakeCount: after.premakeCount,
        updatedBy: deps.actor,
        updatedAt: now,
      },
    });
    await deps.audit(tx, {
      action: "retention.settings",
      target: "retention_settings",
      result: input.force && warnings.length > 0 ? "forced" : "ok",
      detail: { ...detail, warnings },
    });
  });
  return { settings: await getRetentionSettings(prisma), warnings };
}
