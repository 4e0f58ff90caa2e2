/** Shared by every command-line entry point: one clear line and a non-zero exit on failure. */
export function runMain(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`onceboard: ${message}\n`);
    if (process.env.ONCEBOARD_DEBUG) console.error(error);
    process.exit(1);
  });
}

export function log(line: string): void {
  process.stdout.write(`onceboard: ${line}\n`);
}
