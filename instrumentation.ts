/**
 * Next.js runs register() once per server process at start. The console runs partition
 * maintenance here (lib/retention/schedule.ts), on the Node.js runtime only, and stops when the
 * process that spawned it (ONCEBOARD_PARENT_PID: npm start, the e2e runner) is gone.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  // Output that has nowhere to go (`npm start | head`, a runner that quit): each failed write used
  // to become an uncaught error whose report failed again, a loop that spun a core and ignored
  // SIGTERM. Nobody is left to read this console's output: stop.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE") process.exit(0);
    });
  }
  const { loadConfig } = await import("./lib/config");
  const { exitWithParent } = await import("./lib/db/process-alive");
  try {
    // A SIGTERM to itself, so Next closes its server as on any stop; and an exit regardless after
    // 5 s (an orphan with a closed stdout was seen to ignore SIGTERM).
    exitWithParent(loadConfig().ONCEBOARD_PARENT_PID, () => {
      setTimeout(() => process.exit(0), 5000).unref();
      process.kill(process.pid, "SIGTERM");
    });
  } catch {
    // An invalid configuration is reported by the routes that need it.
  }
  const { startConsoleMaintenance } = await import("./lib/retention/schedule");
  try {
    startConsoleMaintenance();
  } catch (error) {
    console.error(`onceboard: partition maintenance not started: ${error instanceof Error ? error.message : String(error)}`);
  }
}
