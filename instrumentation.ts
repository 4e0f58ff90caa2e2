/**
 * Next.js runs register() once per server process at start, and builds this file for the Node.js
 * and the Edge runtimes both. The console's start (instrumentation-node.ts) is imported inside the
 * check itself: Next.js inlines NEXT_RUNTIME per build, so the Edge build drops the import and never
 * bundles the Node.js modules it reaches (which it would otherwise warn about, one warning each).
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME === "nodejs") {
    const { startConsoleProcess } = await import("./instrumentation-node");
    await startConsoleProcess();
  }
}
