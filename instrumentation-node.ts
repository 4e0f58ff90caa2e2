/**
 * The console's start on the Node.js runtime, imported by instrumentation.ts only there: the
 * console ends with whoever owns it (lib/console/process-lifecycle.ts), hands its server the key
 * lookup and search to answer without the router (lib/routes/direct-api.ts), and runs partition
 * maintenance (lib/features/retention-and-gaps/schedule.ts), bulk actions
 * (lib/features/bulk-actions/bulk-runner.ts) and reconciliation (lib/reconciliation/schedule.ts).
 */
export async function startConsoleProcess(): Promise<void> {
  const { endWithOwner } = await import("./lib/console/process-lifecycle");
  endWithOwner();
  const { installDirectApi } = await import("./lib/routes/direct-api");
  installDirectApi();
  const { startConsoleMaintenance } = await import("./lib/features/retention-and-gaps/schedule");
  try {
    startConsoleMaintenance();
  } catch (error) {
    console.error(`onceboard: partition maintenance not started: ${error instanceof Error ? error.message : String(error)}`);
  }
  const { startBulkRunner } = await import("./lib/features/bulk-actions/bulk-runner");
  startBulkRunner();
  try {
    await startConsoleReconciliation();
  } catch (error) {
    console.error(`onceboard: reconciliation not started: ${error instanceof Error ? error.message : String(error)}`);
  }
}

declare global {
  var __onceboardReconcileSchedule: unknown;
}

/** Reconciliation with the configured providers (lib/reconciliation/schedule.ts), on the maintenance pool, counted on the console's registry. */
async function startConsoleReconciliation(): Promise<void> {
  const { loadConfig } = await import("./lib/config");
  const config = loadConfig();
  if (!config.DATABASE_URL || globalThis.__onceboardReconcileSchedule) return;
  if (config.EFFECTS_DATABASE_URL) {
    if (config.ONCEBOARD_PROVIDERS_FILE)
      console.error(
        "onceboard: reconciliation not started: it needs the effects in the console's PostgreSQL (EFFECTS_DATABASE_URL is set)",
      );
    return;
  }
  const [{ startReconcileSchedule }, { maintenancePool }, { consoleRegistry }] = await Promise.all([
    import("./lib/reconciliation/schedule"),
    import("./lib/features/retention-and-gaps/maintenance-pool"),
    import("./lib/console/http-metrics"),
  ]);
  globalThis.__onceboardReconcileSchedule = startReconcileSchedule({
    pool: maintenancePool(),
    config,
    registry: consoleRegistry(),
    log: (line) => console.error(`onceboard: ${line}`),
  });
}
