import { ConfigError, loadDebugFlag } from "../lib/config";

/** One line on stderr and exit 1: what every command-line entry point does on failure (a stack only with ONCEBOARD_DEBUG). */
function fail(error: unknown): never {
  const message = error instanceof Error ? error.message : String(error);
  // A configuration error lists one mistake a line (a providers file's); any other error is one line.
  const lines = error instanceof ConfigError ? message.split("\n") : [message.split("\n")[0]];
  process.stderr.write(`onceboard: ${lines.join("\n")}\n`);
  if (loadDebugFlag()) console.error(error);
  process.exit(1);
}

/** Shared by every command-line entry point: one clear line and a non-zero exit on failure. */
export function runMain(main: () => Promise<void>): void {
  // A fault outside main's promise chain (an unhandled 'error' event, a stray rejection) is still
  // a failure of this command: reported the same way, never as a stack trace.
  process.on("uncaughtException", fail);
  process.on("unhandledRejection", fail);
  main().catch(fail);
}

export function log(line: string): void {
  process.stdout.write(`onceboard: ${line}\n`);
}
