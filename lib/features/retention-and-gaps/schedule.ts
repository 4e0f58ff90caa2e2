import { loadConfig } from "../../config";
import { defaultRegistry, type MaintenanceSchedule, startMaintenance } from "../../idempotency";
import { maintenanceTarget } from "./maintenance-pool";

declare global {
  var __onceboardMaintenanceSchedule: MaintenanceSchedule | undefined;
}

/**
 * The console's maintenance loop (started from instrumentation-node.ts): a run at start, then every
 * RETENTION_MAINTENANCE_INTERVAL_SECONDS. Workers run the same loop (createEffects({ maintain }));
 * the advisory lock (on MySQL, the library's lease) makes one act at a time. Idempotent per process. Not in a read-only console
 * (CONSOLE_READ_ONLY): maintenance creates, detaches and drops partitions; the workers or a
 * writable console maintain them.
 */
export function startConsoleMaintenance(): MaintenanceSchedule | null {
  const config = loadConfig();
  if (!config.DATABASE_URL || config.RETENTION_MAINTENANCE_INTERVAL_SECONDS === 0 || config.CONSOLE_READ_ONLY) return null;
  if (!globalThis.__onceboardMaintenanceSchedule) {
    const target = maintenanceTarget();
    const options = {
      intervalMs: config.RETENTION_MAINTENANCE_INTERVAL_SECONDS * 1000,
      registry: defaultRegistry(),
      runner: `console:${process.pid}`,
      trigger: "schedule" as const,
    };
    // The effects store's own maintenance (on MySQL, the library's run there: the same lease as its workers').
    globalThis.__onceboardMaintenanceSchedule =
      target.engine === "mysql"
        ? startMaintenance(target.pool, { ...options, schema: target.database })
        : startMaintenance(target.pool, options);
  }
  return globalThis.__onceboardMaintenanceSchedule;
}
