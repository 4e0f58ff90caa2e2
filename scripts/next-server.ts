import { type ChildProcess, spawn } from "node:child_process";
import fs, { existsSync } from "node:fs";
import path from "node:path";
import readline from "node:readline";
import type { Readable, Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";

const ROOT = path.resolve(import.meta.dirname, "..");
const NEXT_BIN = path.join(ROOT, "node_modules", ".bin", "next");
const CONSOLE_SERVER = path.join(ROOT, "scripts", "console-server.ts");

/** Environment for every Next.js child: no telemetry, ever. */
export function nextEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, NEXT_TELEMETRY_DISABLED: "1", ...extra };
}

export function hasProductionBuild(): boolean {
  return existsSync(path.join(ROOT, ".next", "BUILD_ID"));
}

export function buildConsole(env: Record<string, string>, onSpawn?: (child: ChildProcess) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(NEXT_BIN, ["build"], { cwd: ROOT, env: nextEnv(env), stdio: "inherit" });
    onSpawn?.(child);
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`next build failed (exit ${code})`))));
  });
}

/** Where to probe a server that listens on `host` (a wildcard address is probed on loopback). */
export function probeHost(host: string): string {
  if (host === "0.0.0.0" || host === "::" || host === "") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}

/** Starts `next start` (or `next dev`) and resolves once it answers HTTP. */
export async function serveConsole(options: {
  mode: "start" | "dev";
  port: number;
  /** Listen address (default 127.0.0.1: this machine only). */
  host?: string;
  env: Record<string, string>;
  timeoutMs?: number;
  quiet?: boolean;
  /** Called as soon as the server process exists, before it is ready. */
  onSpawn?: (pid: number | undefined) => void;
  /** The server process, as soon as it exists (so a caller can stop it while it starts). */
  onChild?: (child: ChildProcess) => void;
  /**
   * Where the console's JSON log lines (lib/api/log-safe.ts) go instead of the terminal, appended;
   * every other line (Next's own) still reaches the terminal.
   */
  jsonLogFile?: string;
}): Promise<ChildProcess> {
  const host = options.host ?? "127.0.0.1";
  // `start` runs the console's own server (scripts/console-server.ts: next start, plus the TCP
  // peer for TRUSTED_PROXIES); `dev` is plain next dev, where no peer is known.
  const [command, args] =
    options.mode === "start"
      ? [process.execPath, ["--import", "tsx", CONSOLE_SERVER, "-H", host, "-p", String(options.port)]]
      : [NEXT_BIN, ["dev", "-H", host, "-p", String(options.port)]];
  const child = spawn(command, args, {
    cwd: ROOT,
    // The console exits once this process is gone (instrumentation.ts), so a SIGKILL here leaves no server behind.
    env: nextEnv({ ONCEBOARD_PARENT_PID: String(process.pid), ...options.env }),
    stdio: options.quiet ? ["ignore", "ignore", "inherit"] : options.jsonLogFile ? ["ignore", "pipe", "pipe"] : "inherit",
  });
  if (!options.quiet && options.jsonLogFile) {
    fs.mkdirSync(path.dirname(options.jsonLogFile), { recursive: true });
    const file = fs.createWriteStream(options.jsonLogFile, { flags: "a", mode: 0o600 });
    if (child.stdout) splitJsonLines(child.stdout, process.stdout, file);
    if (child.stderr) splitJsonLines(child.stderr, process.stderr, file);
    child.on("exit", () => file.end());
  }
  options.onSpawn?.(child.pid);
  options.onChild?.(child);
  const exited = new Promise<never>((_, reject) => {
    child.on("exit", (code) => reject(new Error(`the console server exited (code ${code}) before it answered`)));
    child.on("error", reject);
  });
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  const ready = (async () => {
    while (Date.now() < deadline) {
      try {
        const response = await fetch(`http://${probeHost(host)}:${options.port}/api/v1/health`);
        if (response.status < 500 || response.status === 503) return;
      } catch {
        // not listening yet
      }
      await sleep(250);
    }
    throw new Error(`the console did not answer on port ${options.port} within ${(options.timeoutMs ?? 120_000) / 1000}s`);
  })();
  await Promise.race([ready, exited]);
  return child;
}

/** A JSON object on a line of its own is a structured log line; anything else is for people. */
export function isJsonLogLine(line: string): boolean {
  if (!line.startsWith("{")) return false;
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** Copies `from` line by line: JSON log lines to `json`, the rest to `human`. */
export function splitJsonLines(from: Readable, human: Writable, json: Writable): void {
  const lines = readline.createInterface({ input: from, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on("line", (line) => (isJsonLogLine(line) ? json : human).write(`${line}\n`));
}
