import { byEngine, type EffectsSource } from "../../console/effects-store";
import { type LiveWorker, readLiveWorkers, readRetentionSettings } from "../../idempotency/admin";
import {
  DAY_SECONDS,
  DEFAULT_RETENTION_SETTINGS,
  type PartitionInterval,
  type RetentionSettingsRow,
} from "../../idempotency/states";

/**
 * What the partition manager reads before it plans, from the effects store the workers read it
 * from: the retention settings row (or its defaults) and the live workers' declared retry windows.
 * On PostgreSQL the library's own readers; on MySQL the same two questions of the library's MySQL
 * tables (same columns, same rule: a registration is live while its heartbeat is younger than its TTL).
 */

const SETTINGS_MYSQL =
  "SELECT retention_days, max_retry_window_days, partition_interval, premake_count FROM retention_settings WHERE id = 1";

const LIVE_WORKERS_MYSQL = `
SELECT worker_id, max_retry_window_seconds, host, pid, started_at, heartbeat_at
  FROM worker_registrations
 WHERE heartbeat_at + INTERVAL ttl_seconds SECOND > ?
 ORDER BY max_retry_window_seconds DESC, worker_id`;

export async function readStoreRetentionSettings(source: EffectsSource): Promise<RetentionSettingsRow> {
  return byEngine(source, {
    postgres: (db) => readRetentionSettings(db),
    mysql: async (db) => {
      const [row] = await db.query<{
        retention_days: number;
        max_retry_window_days: number;
        partition_interval: PartitionInterval;
        premake_count: number;
      }>(SETTINGS_MYSQL);
      if (!row) return { ...DEFAULT_RETENTION_SETTINGS };
      return {
        retentionSeconds: row.retention_days * DAY_SECONDS,
        maxRetryWindowSeconds: row.max_retry_window_days * DAY_SECONDS,
        interval: row.partition_interval,
        premakeCount: row.premake_count,
      };
    },
  });
}

export async function readStoreLiveWorkers(source: EffectsSource, now: Date): Promise<LiveWorker[]> {
  return byEngine(source, {
    postgres: (db) => readLiveWorkers(db, now),
    mysql: async (db) =>
      (
        await db.query<{
          worker_id: string;
          max_retry_window_seconds: number;
          host: string | null;
          pid: number | null;
          started_at: Date;
          heartbeat_at: Date;
        }>(LIVE_WORKERS_MYSQL, [now])
      ).map((r) => ({
        workerId: r.worker_id,
        maxRetryWindowSeconds: Number(r.max_retry_window_seconds),
        host: r.host,
        pid: r.pid,
        startedAt: r.started_at,
        heartbeatAt: r.heartbeat_at,
      })),
  });
}
