import { randomUUID } from "node:crypto";
import type mysql from "mysql2/promise";
import type pg from "pg";
import { effectsStore, type MysqlEffectsStore } from "../../console/effects-store";
import { ConsoleError } from "../../console/errors";
import type { Prisma } from "../../db/generated/client";
import { getPrisma, type PrismaClient } from "../../db/prisma";
import { formatDuration } from "../../format";
import { type LiveWorker, readLiveWorkers } from "../../idempotency/admin";
import { DEFAULT_RETENTION_SETTINGS } from "../../idempotency/states";
import type { RetentionSettingsView, SettingsUpdateView } from "./contract";
import { type RetentionBlocker, RetentionError } from "./errors";
import { getObservedMaxGapSeconds, getRetentionSettings } from "./get-retention";
import { maintenancePool } from "./maintenance-pool";
import type { PartitionIntervalName } from "./retention-types";
import { readStoreLiveWorkers } from "./store-settings";

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
  /** The effects store (default: the configured one, unless `pool` names a PostgreSQL one). */
  store?: ReturnType<typeof effectsStore>;
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

/** The settings `input` asks for over `before`, or the refusal that names what is wrong (both engines). */
function settingsAfter(before: RetentionSettingsView, input: RetentionSettingsInput): RetentionSettingsView {
  const after: RetentionSettingsView = {
    ...before,
    retentionDays: input.retentionDays ?? before.retentionDays,
    maxRetryWindowDays: input.maxRetryWindowDays ?? before.maxRetryWindowDays,
    partitionInterval: input.partitionInterval ?? before.partitionInterval,
    premakeCount: input.premakeCount ?? before.premakeCount,
  };
  const invalid = invalidRetention(after, input.maxRetryWindowDays !== undefined);
  if (invalid) throw invalid;
  return after;
}

/**
 * Changes the retention settings. Lowering the retention below the largest retry window a live
 * worker declared is refused unless forced with a reason (audited); below the observed maximum
 * redelivery gap it is allowed with a warning. Every attempt, refused ones included, is audited.
 * With `expect`, the change is made only if the settings still hold those values (checked by the
 * UPDATE itself): a change confirmed against a preview fails with RETENTION_STALE if another
 * change landed in between.
 */
export async function updateRetentionSettings(input: RetentionSettingsInput, deps: UpdateDeps): Promise<SettingsUpdateView> {
  const store = deps.store ?? (deps.pool === undefined ? effectsStore() : null);
  if (store?.engine === "mysql") return updateRetentionSettingsOnMysql(input, deps, store);
  const prisma = deps.prisma ?? getPrisma();
  const pool = deps.pool ?? maintenancePool();
  const now = deps.now ?? new Date();
  const before = await getRetentionSettings(prisma);
  const after = settingsAfter(before, input);
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

/** The audit result committed before a settings change is tried on a MySQL store, and the one for a change whose outcome the console never heard. */
const SETTINGS_REQUESTED = "requested";
const SETTINGS_OUTCOME_UNKNOWN = "unknown";

/**
 * updateRetentionSettings on a MySQL effects store, where the settings row is (the workers and the
 * maintenance read it there) while the audit log is in the console's PostgreSQL. No transaction
 * spans both, so, as a release there (lib/features/keys-and-effects/release-effect.ts releaseOnMysql):
 * the audit row "requested" (before, after, a request id) commits first; then the change is one
 * MySQL transaction under the settings row's lock (the `expect` of a confirmed preview compared
 * under it, so a concurrent change cannot slip between); then the outcome is audited (ok, forced,
 * or stale) naming the request. A failure of MySQL mid-change is audited as "unknown", never as
 * done. Writing the same values again is harmless, so a person who sees "unknown" re-reads the
 * settings and applies again. The same refusals as on PostgreSQL come first and write nothing there.
 */
async function updateRetentionSettingsOnMysql(
  input: RetentionSettingsInput,
  deps: UpdateDeps,
  store: MysqlEffectsStore,
): Promise<SettingsUpdateView> {
  const prisma = deps.prisma ?? getPrisma();
  const now = deps.now ?? new Date();
  const before = await getRetentionSettings(prisma, store);
  const after = settingsAfter(before, input);
  const action = deps.auditAction ?? "retention.settings";
  const audited = (result: string, detail: Prisma.InputJsonValue) =>
    prisma.$transaction((tx) => deps.audit(tx, { action, target: "retention_settings", result, detail }));
  const detail = {
    before: settingsValues(before),
    after: settingsValues(after),
    force: input.force ?? false,
    reason: input.reason ?? null,
  };
  const warnings: string[] = [];
  const refusal = liveWindowRefusal(after, await readStoreLiveWorkers(store, now));
  if (refusal) {
    if (!input.force || !input.reason || input.reason.trim().length < 3) {
      await audited("refused", { ...detail, refused: refusal.message });
      throw refusal;
    }
    warnings.push(`forced: ${refusal.message.split("; ")[0]}`);
  }
  const gap = await getObservedMaxGapSeconds(store, null);
  if (gap !== null && after.retentionDays * DAY < gap) {
    warnings.push(
      `retention ${formatDuration(after.retentionDays * 86_400)} is below the largest redelivery gap observed (${formatDuration(Math.ceil(gap))})`,
    );
  }
  const request = randomUUID();
  await audited(SETTINGS_REQUESTED, { ...detail, request, store: "mysql", ...deps.auditDetail });
  let written: "ok" | "stale";
  try {
    written = await writeSettingsMysql(store.pool, settingsValues(after), deps.actor, now, input.expect);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    await audited(SETTINGS_OUTCOME_UNKNOWN, { request, error: why.slice(0, 500) }).catch(() => {});
    throw new ConsoleError(
      "DATABASE_UNAVAILABLE",
      `the MySQL effects store failed during the settings change (${why}): whether it landed is unknown. The audit log records request ${request} as outcome unknown; read the settings again before changing them`,
      { cause: error },
    );
  }
  if (written === "stale") {
    await audited("stale", { request });
    throw staleSettings(input.expect as { retentionDays: number; maxRetryWindowDays: number });
  }
  await audited(input.force && warnings.length > 0 ? "forced" : "ok", { request, warnings });
  return { settings: await getRetentionSettings(prisma, store), warnings };
}

/** MariaDB's and MySQL's duplicate key: a concurrent first change created the row. */
const ER_DUP_ENTRY = 1062;

/**
 * The settings row written in one transaction under its lock: with `expect`, only while it still
 * holds those values ("stale" otherwise); no row yet stands for the defaults, and creating it races
 * a concurrent creator on the primary key (its loser is stale). Decided by what the locked read
 * says, never by affected rows (the drivers' CLIENT_FOUND_ROWS makes those ambiguous).
 */
async function writeSettingsMysql(
  pool: mysql.Pool,
  values: RetentionSettingsValues,
  actor: string,
  now: Date,
  expect: { retentionDays: number; maxRetryWindowDays: number } | undefined,
): Promise<"ok" | "stale"> {
  for (;;) {
    const written = await writeSettingsOnceMysql(pool, values, actor, now, expect);
    // Without `expect`, losing the creation race to another change is no refusal: update the row it made.
    if (written !== "created elsewhere") return written;
  }
}

async function writeSettingsOnceMysql(
  pool: mysql.Pool,
  values: RetentionSettingsValues,
  actor: string,
  now: Date,
  expect: { retentionDays: number; maxRetryWindowDays: number } | undefined,
): Promise<"ok" | "stale" | "created elsewhere"> {
  const connection = await pool.getConnection();
  try {
    await connection.query("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
    await connection.beginTransaction();
    const [rows] = await connection.query(
      "SELECT retention_days, max_retry_window_days FROM retention_settings WHERE id = 1 FOR UPDATE",
    );
    const row = (rows as { retention_days: number; max_retry_window_days: number }[])[0];
    const holds = row
      ? !expect || (row.retention_days === expect.retentionDays && row.max_retry_window_days === expect.maxRetryWindowDays)
      : !expect ||
        (expect.retentionDays === DEFAULT_RETENTION_SETTINGS.retentionSeconds / DAY &&
          expect.maxRetryWindowDays === DEFAULT_RETENTION_SETTINGS.maxRetryWindowSeconds / DAY);
    if (!holds) {
      await connection.rollback();
      return "stale";
    }
    const set = [values.retentionDays, values.maxRetryWindowDays, values.partitionInterval, values.premakeCount, now, actor];
    if (row)
      await connection.query(
        "UPDATE retention_settings SET retention_days = ?, max_retry_window_days = ?, partition_interval = ?, premake_count = ?, updated_at = ?, updated_by = ? WHERE id = 1",
        set,
      );
    else
      await connection.query(
        "INSERT INTO retention_settings (retention_days, max_retry_window_days, partition_interval, premake_count, updated_at, updated_by, id) VALUES (?, ?, ?, ?, ?, ?, 1)",
        set,
      );
    await connection.commit();
    return "ok";
  } catch (error) {
    await connection.rollback().catch(() => {});
    if ((error as { errno?: unknown }).errno === ER_DUP_ENTRY) return expect ? "stale" : "created elsewhere";
    throw error;
  } finally {
    connection.release();
  }
}
