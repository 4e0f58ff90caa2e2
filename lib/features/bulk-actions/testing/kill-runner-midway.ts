import { spawn } from "node:child_process";
import path from "node:path";

/**
 * Starts a bulk runner in a child process (bulk-runner-child.ts, each item slowed by `itemDelayMs`)
 * and SIGKILLs it once it has reported `killAfterItems` items, so a test can check the action
 * resumes from its checkpoint. Resolves when the child is gone.
 */
export async function killRunnerMidway(
  databaseUrl: string,
  { itemDelayMs = 1500, killAfterItems = 15 }: { itemDelayMs?: number; killAfterItems?: number } = {},
): Promise<void> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", path.join(import.meta.dirname, "bulk-runner-child.ts"), String(itemDelayMs)],
    { env: { ...process.env, DATABASE_URL: databaseUrl }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += String(chunk);
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  await new Promise<void>((resolve, reject) => {
    let seen = 0;
    const stuck = setTimeout(() => reject(new Error(`the runner child did not get going: ${stdout} ${stderr}`)), 30_000);
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += String(chunk);
      seen += String(chunk)
        .split("\n")
        .filter((line) => line.startsWith("item ")).length;
      if (seen >= killAfterItems) {
        clearTimeout(stuck);
        child.kill("SIGKILL");
        resolve();
      }
    });
    child.on("exit", (code, signal) => {
      if (signal !== "SIGKILL") reject(new Error(`the runner child exited (${code}) before it was killed: ${stderr}`));
    });
  });
  await exited;
}
