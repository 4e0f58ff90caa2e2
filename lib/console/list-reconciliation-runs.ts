import type { Scope } from "../auth/scope";
import type { StatementQueryable } from "../db/types";
import { consoleDatabase } from "./database";
import {
  FINDING_KINDS,
  type FindingKind,
  type ReconciliationRun,
  type ReconciliationRunListResponse,
  type RunStatus,
} from "./reconciliation-types";

export interface RunSearch {
  provider?: string;
  /** The id of the last run of the previous page (runs are listed newest id first). */
  cursor?: string;
  limit: number;
  now?: Date;
}

// Newest first by id (ids grow with started_at); the cursor is the last id of the previous page.
const LIST = {
  name: "console_list_reconciliation_runs",
  text: `
SELECT id::text AS id, provider, window_from, window_to, grace_seconds, status, trigger, requested_by,
       started_at, finished_at, heartbeat_at, objects_seen::float8 AS objects_seen,
       effects_seen::float8 AS effects_seen, matched::float8 AS matched, counts, error
  FROM reconciliation_runs
 WHERE ($1::text IS NULL OR provider = $1)
   AND ($2::bigint IS NULL OR id < $2::bigint)
 ORDER BY id DESC
 LIMIT $3`,
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
export function runCounts(value: unknown): Record<FindingKind, number> {
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
 * GET /api/v1/reconciliation/runs: the runs, newest first. A run covers a provider's window for
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
    values: [search.provider ?? null, search.cursor ?? null, search.limit + 1],
  });
  const page = rows.slice(0, search.limit);
  const last = page[page.length - 1];
  return {
    runs: page.map((r) => toReconciliationRun(r, scope.platform, now)),
    nextCursor: rows.length > search.limit && last ? last.id : null,
  };
}
