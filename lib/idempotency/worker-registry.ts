import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { type EffectsDb, sqlFor } from "./db";
import { RetentionConfigError } from "./errors";
import type { Logger } from "./logger";
import { isTransientDatabaseError } from "./pg-errors";
import { processStartedAt } from "./process-start";
import type { Store } from "./store";
import { storeFor } from "./store-for";

/**
 * One truth for retention, on the worker's side. A worker registers the maxRetryWindow it
 * declares (a row with a heartbeat; the partition manager never drops what a live worker may
 * still be redelivered) and reads the retention from the database, cached and refreshed with
 * each heartbeat, instead of trusting its own option. A worker whose window exceeds the
 * retention refuses to start.
 */

export interface WorkerRegistrationOptions {
  workerId: string;
  /** The engine's statements; default: the store for `db`'s engine (store-for.ts). */
  store?: Store;
  /** The worker's name across restarts (the workerName option): its start is recorded under it. Default the host's name. */
  workerName?: string;
  /** The library's schema (schema.ts). Default onceboard. */
  schema?: string;
  maxRetryWindowMs: number;
  /** Heartbeat (and settings refresh) period. Default 30 s; the row lives 4 heartbeats. */
  heartbeatMs?: number;
  logger?: Logger;
  /** Called with the database retention on registration and after each refresh. */
  onRetention?: (retentionMs: number) => void;
}

export interface WorkerRegistration {
  /** Resolves once registered (the retention read); rejects with RetentionConfigError when refused. */
  readonly ready: Promise<{ retentionMs: number }>;
  /** Stops the heartbeat and removes the row (a stopped worker holds nothing back). */
  stop(): Promise<void>;
}

const fmt = (ms: number) =>
  ms % 86_400_000 === 0 ? `${ms / 86_400_000}d` : ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : `${ms / 1000}s`;

export function registerWorker(db: EffectsDb, options: WorkerRegistrationOptions): WorkerRegistration {
  const sql = sqlFor(db, false, options.schema);
  const heartbeatMs = options.heartbeatMs ?? 30_000;
  const ttlSeconds = Math.max(1, Math.ceil((heartbeatMs * 4) / 1000));
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;

  const store = options.store ?? storeFor(db);
  const readRetentionMs = async (): Promise<number> => ((await store.readRetentionDays(sql)) ?? 7) * 86_400_000;
  const beat = () =>
    store.beat(sql, {
      workerId: options.workerId,
      maxRetryWindowSeconds: options.maxRetryWindowMs / 1000,
      host: os.hostname(),
      pid: process.pid,
      ttlSeconds,
    });

  // The database may not be there yet when a worker starts (a deploy racing a failover): keep
  // trying on transient errors, meanwhile the local option stands; anything else is reported.
  const firstRead = async (): Promise<number> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await readRetentionMs();
      } catch (error) {
        if (stopped || !isTransientDatabaseError(error)) throw error;
        options.logger?.warn(
          { err: error instanceof Error ? error.message : String(error), attempt },
          "worker registration: database not reachable, trying again",
        );
        await sleep(Math.min(500 * 2 ** attempt, 30_000), undefined, { ref: false });
      }
    }
  };

  const ready = (async () => {
    const retentionMs = await firstRead();
    if (options.maxRetryWindowMs > retentionMs) {
      stopped = true;
      throw new RetentionConfigError(
        `refusing to start: this worker's maxRetryWindow (${fmt(options.maxRetryWindowMs)}) exceeds the database retention (${fmt(retentionMs)}); raise the retention (npm run retention -- settings set --retention-days N) or shorten the window`,
      );
    }
    await beat();
    // Once per registration; a failure (a schema migrated before worker_starts) costs only the count.
    await store
      .recordStart(sql, {
        workerName: options.workerName ?? os.hostname(),
        processStartedAt: processStartedAt(),
        host: os.hostname(),
        pid: process.pid,
        workerId: options.workerId,
      })
      .catch((error: unknown) =>
        options.logger?.warn(
          { err: error instanceof Error ? error.message : String(error) },
          "worker registration: this start could not be recorded (the console's restart count will miss it)",
        ),
      );
    options.onRetention?.(retentionMs);
    timer = setInterval(async () => {
      if (stopped) return;
      try {
        await beat();
        const fresh = await readRetentionMs();
        options.onRetention?.(fresh);
        if (options.maxRetryWindowMs > fresh) {
          options.logger?.error(
            { maxRetryWindowMs: options.maxRetryWindowMs, retentionMs: fresh },
            `the database retention (${fmt(fresh)}) is now below this worker's maxRetryWindow (${fmt(options.maxRetryWindowMs)})`,
          );
        }
      } catch (error) {
        options.logger?.warn({ err: error instanceof Error ? error.message : String(error) }, "worker heartbeat failed");
      }
    }, heartbeatMs);
    timer.unref?.();
    return { retentionMs };
  })();
  ready.catch(() => {});

  return {
    ready,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await ready.catch(() => {});
      await store.unregister(sql, options.workerId).catch(() => {});
    },
  };
}
