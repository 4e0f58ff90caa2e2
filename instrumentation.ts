/**
 * Next.js runs register() once per server process at start. The console runs partition
 * maintenance here (lib/retention/schedule.ts), on the Node.js runtime only.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { startConsoleMaintenance } = await import("./lib/retention/schedule");
  try {
    startConsoleMaintenance();
  } catch (error) {
    console.error(`onceboard: partition maintenance not started: ${error instanceof Error ? error.message : String(error)}`);
  }
}
