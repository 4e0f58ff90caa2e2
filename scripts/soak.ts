import fs from "node:fs";
import { parseSoakArgs, SoakUsageError, USAGE } from "../lib/soak/options";
import { runSoak } from "../lib/soak/run";

/**
 * `npm run soak [-- --deliveries <n>] [--store mariadb]`: the fault-injection soak (docs/soak.md). Progress on stderr,
 * findings on stdout, the last line exactly
 * `soak deliveries=<n> duplicates_suppressed=<n> killed=<n> double_effects=<n> lost=<n> violations_lost=<n>`.
 * Exits 1 when anything was applied twice or lost, or any other check failed; 2 on bad input.
 * SIGINT or SIGTERM stops publishing; the run drains and verifies what it published.
 */
let options: ReturnType<typeof parseSoakArgs>;
try {
  options = parseSoakArgs(process.argv.slice(2));
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  // One line: what is wrong; the usage only when the flag itself is unknown.
  const hint = error instanceof SoakUsageError && !message.startsWith("--") ? ` (${USAGE})` : "";
  process.stderr.write(`onceboard: soak: ${message}${hint}\n`);
  process.exit(2);
}

// SIGINT / SIGTERM once: stop publishing, drain what was published, and give the verdict on it
// (a long run cut short still ends with its findings). Twice: leave at once.
let stopRequested = false;
const requestStop = (signal: NodeJS.Signals) => {
  if (stopRequested) process.exit(130);
  stopRequested = true;
  process.stderr.write(
    `\nonceboard: soak: ${signal}: no more publishing; draining and verifying what was published (${signal} again to abort)\n`,
  );
};
process.on("SIGINT", requestStop);
process.on("SIGTERM", requestStop);

const tty = process.stderr.isTTY === true;
let lastPrinted = 0;
const result = await runSoak(options, {
  stopRequested: () => stopRequested,
  log: (line) => {
    if (tty) process.stderr.write("\r\x1b[2K");
    process.stdout.write(`soak: ${line}\n`);
  },
  progress: (line) => {
    if (tty) {
      process.stderr.write(`\r\x1b[2K${line}`);
    } else if (Date.now() - lastPrinted >= 10_000) {
      lastPrinted = Date.now();
      process.stderr.write(`${line}\n`);
    }
  },
}).catch((error: unknown) => {
  process.stderr.write(`onceboard: soak: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
if (tty) process.stderr.write("\r\x1b[2K");
if (options.report) fs.writeFileSync(options.report, `${JSON.stringify(result, null, 2)}\n`);
for (const failure of result.failures) process.stdout.write(`soak: FAILED: ${failure}\n`);
process.stdout.write(
  `soak: ${result.ok ? "passed" : "failed"} in ${result.durationSeconds} s on ${result.machine.cpus} x ${result.machine.cpuModel}, PostgreSQL ${result.machine.postgres}${result.machine.mariadb ? `, MariaDB ${result.machine.mariadb}` : ""}\n`,
);
process.stdout.write(`${result.summary}\n`);
process.exit(result.ok ? 0 : 1);
