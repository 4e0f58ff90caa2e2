import type { Scope } from "../../auth/scope";
import { consoleDatabase } from "../../console/database";
import { Keyset } from "../../console/keyset";
import type { StatementQueryable } from "../../db/types";
import type { ReconciliationRun, ReconciliationRunListResponse } from "./contract";
import { FINDING_KINDS, type FindingKind, type RunStatus } from "./reconciliation-types";

interface RunSearch {
  provider?: string;
  /** One window's runs: both or neither (runsQuery refuses one alone). */
  windowFrom?: Date;
  windowTo?: Date;
  /** The previous page's nextCursor. */
  cursor?: string;
  limit: number;
  now?: Date;
}

/**
 * Newest started first, ties (runs started in one transaction, or one clock tick) by id: the
 * (started_at DESC) index, then the few runs of one instant sorted.
 */
const RUN_KEYSET = new Keyset("runs", [
  { column: "r.started_at", type: "timestamptz" },
  { column: "r.id", type: "bigint" },
]);

/** A RunRow's columns of `reconciliation_runs r`, as toReconciliationRun reads them. */
export const RUN_COLUMNS = `r.id::text AS id, r.provider, r.window_from, r.window_to, r.grace_seconds, r.status, r.trigger,
       r.requested_by, r.started_at, r.finished_at, r.heartbeat_at, r.objects_seen::float8 AS objects_seen,
       r.effects_seen::float8 AS effects_seen, r.matched::float8 AS matched, r.counts, r.error`;

// One window's runs: the (provider, window_from, window_to, started_at DESC) index.
const LIST = {
  name: "console_list_reconciliation_runs",
  text: `
SELECT ${RUN_COLUMNS}, ${RUN_KEYSET.cursorColumns}
  FROM reconciliation_runs r
 WHERE ($1::text IS NULL OR r.provider = $1)
   AND ($2::timestamptz IS NULL OR (r.window_from = $2 AND r.window_to = $3::timestamptz))
   AND ${RUN_KEYSET.after(4)}
 ORDER BY ${RUN_KEYSET.orderBy}
 LIMIT $6`,
};

export interface RunRow {
  id: string;
  provider: string;
  window_from: Date;
  window_to: Date;
  grace_seconds: number;
  status: RunStatus;
  trigger: string;
  requested_by: string | null;
  started_at: Date;
  finished_at: Date | null;
  heartbeat_at: Date | null;
  objects_seen: number;
  effects_seen: number;
  matched: number;
  counts: unknown;
  error: string | null;
}

/** The counts jsonb with every kind present (a kind the run found none of is 0). */
function runCounts(value: unknown): Record<FindingKind, number> {
  const source = value !== null && typeof value === "object" ? (value as Record<string, unknown>) : {};
  return Object.fromEntries(
    FINDING_KINDS.map((kind) => {
      const n = Number(source[kind] ?? 0);
      return [kind, Number.isFinite(n) ? n : 0];
    }),
  ) as Record<FindingKind, number>;
}

export function toReconciliationRun(r: RunRow, platform: boolean, now: Date): ReconciliationRun {
  const end = r.finished_at ?? now;
  return {
    id: r.id,
    provider: r.provider,
    windowFrom: r.window_from.toISOString(),
    windowTo: r.window_to.toISOString(),
    graceSeconds: r.grace_seconds,
    status: r.status,
    trigger: r.trigger,
    // Who started a run names a principal of some tenant or the platform: the platform's to see.
    requestedBy: platform ? r.requested_by : null,
    startedAt: r.started_at.toISOString(),
    finishedAt: r.finished_at ? r.finished_at.toISOString() : null,
    heartbeatAt: r.heartbeat_at ? r.heartbeat_at.toISOString() : null,
    durationSeconds: Math.max(0, (end.getTime() - r.started_at.getTime()) / 1000),
    // A run reads every tenant's objects and effects: its tallies are the platform's to see.
    objectsSeen: platform ? r.objects_seen : null,
    effectsSeen: platform ? r.effects_seen : null,
    matched: platform ? r.matched : null,
    counts: platform ? runCounts(r.counts) : null,
    // A failure message may quote a provider's answer about any tenant's object.
    error: platform ? r.error : r.error === null ? null : "the run failed",
  };
}

/**
 * GET /api/v1/reconciliation/runs: the runs (of one provider, of one window), newest first. A run covers a provider's window for
 * every tenant, so a tenant scope sees when runs happened and their status, but not the
 * tallies (objects, effects, matched), the counts, who asked or a failure's text, which span tenants.
 */
export async function listReconciliationRuns(
  scope: Scope,
  search: RunSearch,
  db: StatementQueryable = consoleDatabase(),
): Promise<ReconciliationRunListResponse> {
  const now = search.now ?? new Date();
  const { rows } = await db.query<RunRow>({
    ...LIST,
    values: [
      search.provider ?? null,
      search.windowFrom ?? null,
      search.windowTo ?? null,
      ...RUN_KEYSET.values(search.cursor),
      search.limit + 1,
    ],
  });
  const page = RUN_KEYSET.page(rows, search.limit);
  return {
    runs: page.rows.map((r) => toReconciliationRun(r, scope.platform, now)),
    nextCursor: page.nextCursor,
  };
}
