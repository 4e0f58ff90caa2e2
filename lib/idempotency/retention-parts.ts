import type { Registry } from "prom-client";
import type { EffectsCore } from "./core";
import { RetentionConfigError } from "./errors";
import { startMaintenance } from "./maintenance-schedule";
import { registerWorker } from "./worker-registry";

/**
 * What createEffects starts for retention, kept out of effects.ts: the worker's
 * registration (its declared maxRetryWindow, heartbeat, the database retention replacing the
 * local option) and, when asked, the maintenance schedule.
 */
export function startRetentionParts(
  core: EffectsCore,
  registry: Registry | undefined,
): { ready: Promise<void>; stop(): Promise<void> } {
  const { opts, logger } = core;
  const registration = opts.register
    ? registerWorker(opts.db, {
        workerId: opts.workerId,
        store: core.store,
        workerName: opts.workerName,
        schema: opts.schema,
        maxRetryWindowMs: opts.maxRetryWindowMs,
        logger,
        onRetention: (retentionMs) => {
          // The claim path reads opts.retentionMs: the database's value wins over the option.
          (opts as { retentionMs: number }).retentionMs = retentionMs;
        },
      })
    : null;
  const ready = registration
    ? registration.ready.then(
        () => undefined,
        (error: unknown) => {
          if (error instanceof RetentionConfigError) {
            // A refused worker takes no claims.
            core.closed = true;
            logger.error(error.message);
            throw error;
          }
          // Not registered (e.g. the schema was never migrated): claims go on with the local option.
          logger.error(
            { err: error instanceof Error ? error.message : String(error) },
            "worker registration failed: the retention is the local option until the next start",
          );
          throw error;
        },
      )
    : Promise.resolve();
  ready.catch(() => {});
  // Maintenance waits for the registration: a refused worker must not drop anything either.
  let schedule: ReturnType<typeof startMaintenance> | null = null;
  if (opts.maintainIntervalMs !== null) {
    const intervalMs = opts.maintainIntervalMs;
    ready.then(
      () => {
        if (!core.closed) {
          schedule = startMaintenance(opts.db as Parameters<typeof startMaintenance>[0], {
            intervalMs,
            logger,
            registry,
            runner: opts.workerId,
            schema: opts.schema,
          });
        }
      },
      () => {},
    );
  }
  return {
    ready,
    async stop() {
      await ready.catch(() => {});
      await schedule?.stop();
      await registration?.stop();
    },
  };
}
