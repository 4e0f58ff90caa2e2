import { loadConfig } from "../config";
import { exitWithParent } from "../db/process-alive";

/**
 * How the console's server process ends when nobody owns it any more (called from
 * instrumentation-node.ts, on the Node.js runtime only):
 * - its output pipe is gone (`npm start | head`, a test runner that quit): each failed write used
 *   to become an uncaught error whose report failed again, a loop that spun a core and ignored
 *   SIGTERM. Nobody is left to read this console's output: it exits;
 * - the process that spawned it (ONCEBOARD_PARENT_PID: npm start, the e2e runner) is gone: it
 *   sends itself SIGTERM, so Next closes its server as on any stop, and exits regardless 5 s later.
 */
export function endWithOwner(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EPIPE") process.exit(0);
    });
  }
  let parentPid: number | undefined;
  try {
    parentPid = loadConfig().ONCEBOARD_PARENT_PID;
  } catch {
    return; // an invalid configuration is reported by the routes that need it
  }
  exitWithParent(parentPid, () => {
    setTimeout(() => process.exit(0), 5000).unref();
    process.kill(process.pid, "SIGTERM");
  });
}
