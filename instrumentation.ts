/**
 * Next.js runs register() once per server process at start. On the Node.js runtime only, the
 * console ends with whoever owns it (lib/console/process-lifecycle.ts), runs partition
 * maintenance (lib/retention/schedule.ts) and bulk actions (lib/auth/bulk-runner.ts). Both are imported here, behind the runtime check, so the
 * Edge build never sees their Node.js APIs.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { endWithOwner } = await import("./lib/console/process-lifecycle");
  endWithOwner();
  const { startConsoleMaintenance } = await import("./lib/retention/schedule");
  try {
    startConsoleMaintenance();
  } catch (error) {
    console.error(`onceboard: partition maintenance not started: ${error instanceof Error ? error.message : String(error)}`);
  }
  const { startBulkRunner } = await import("./lib/auth/bulk-runner");
  startBulkRunner();
}
