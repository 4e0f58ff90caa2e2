import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");
const NEXT_BIN = path.join(ROOT, "node_modules", ".bin", "next");

/** Environment for every Next.js child: no telemetry, ever. */
export function nextEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, NEXT_TELEMETRY_DISABLED: "1", ...extra };
}

export function hasProductionBuild(): boolean {
  return existsSync(path.join(ROOT, ".next", "BUILD_ID"));
}

export function buildConsole(env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(NEXT_BIN, ["build"], { cwd: ROOT, env: nextEnv(env), stdio: "inherit" });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`next build failed (exit ${code})`))));
  });
}

/** Starts `next start` (or `next dev`) and resolves once it answers HTTP. */
export async function serveConsole(options: {
  mode: "start" | "dev";
  port: number;
  env: Record<string, string>;
  timeoutMs?: number;
  quiet?: boolean;
  /** Called as soon as the server process exists, before it is ready. */
  onSpawn?: (pid: number | undefined) => void;
}): Promise<ChildProcess> {
  const child = spawn(NEXT_BIN, [options.mode, "-p", String(options.port)], {
    cwd: ROOT,
    env: nextEnv(options.env),
    stdio: options.quiet ? ["ignore", "ignore", "inherit"] : "inherit",
  });
  options.onSpawn?.(child.pid);
  const exited = new Promise<never>((_, reject) => {
    child.on("exit", (code) => reject(new Error(`the console server exited (code ${code}) before it answered`)));
    child.on("error", reject);
  });
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  const ready = (async () => {
    while (Date.now() < deadline) {
      try {
        const response = await fetch(`http://127.0.0.1:${options.port}/api/v1/health`);
        if (response.status < 500 || response.status === 503) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`the console did not answer on port ${options.port} within ${(options.timeoutMs ?? 120_000) / 1000}s`);
  })();
  await Promise.race([ready, exited]);
  return child;
}
