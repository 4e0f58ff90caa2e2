import type pg from "pg";
import { LIVE_WINDOWS, READ_SETTINGS } from "./maintenance-sql";
import { queryingIn, schemaNameOf } from "./schema";
import { DAY_SECONDS, DEFAULT_RETENTION_SETTINGS, type PartitionInterval, type RetentionSettingsRow } from "./states";

/**
 * What the partition manager reads before it plans: the retention settings row (or its defaults)
 * and the live workers' declared retry windows. The console's advisor reads them here too.
 */

export const HOUR = 3_600_000;

export interface LiveWorker {
  workerId: string;
  maxRetryWindowSeconds: number;
  host: string | null;
  pid: number | null;
  startedAt: Date;
  heartbeatAt: Date;
}

/** What the settings readers need: a pg Pool, PoolClient or Client, or anything with its text query. */
export interface TextQueryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

export async function readRetentionSettings(queryable: TextQueryable, schema?: string): Promise<RetentionSettingsRow> {
  const db = queryingIn(queryable, schemaNameOf(schema));
  const { rows } = await db.query<{
    retention_days: number;
    max_retry_window_days: number;
    partition_interval: PartitionInterval;
    premake_count: number;
  }>(READ_SETTINGS);
  const row = rows[0];
  if (!row) return { ...DEFAULT_RETENTION_SETTINGS };
  return {
    retentionSeconds: row.retention_days * DAY_SECONDS,
    maxRetryWindowSeconds: row.max_retry_window_days * DAY_SECONDS,
    interval: row.partition_interval,
    premakeCount: row.premake_count,
  };
}

export async function readLiveWorkers(queryable: TextQueryable, now: Date, schema?: string): Promise<LiveWorker[]> {
  const db = queryingIn(queryable, schemaNameOf(schema));
  const { rows } = await db.query<{
    worker_id: string;
    max_retry_window_seconds: number;
    host: string | null;
    pid: number | null;
    started_at: Date;
    heartbeat_at: Date;
  }>(LIVE_WINDOWS, [now]);
  return rows.map((r) => ({
    workerId: r.worker_id,
    maxRetryWindowSeconds: r.max_retry_window_seconds,
    host: r.host,
    pid: r.pid,
    startedAt: r.started_at,
    heartbeatAt: r.heartbeat_at,
  }));
}
