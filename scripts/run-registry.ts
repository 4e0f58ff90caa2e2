import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { isProcessAlive } from "../lib/db/process-alive";

/**
 * `npm start` records the processes it spawned (console server, demo workers) beside the
 * embedded cluster. If that run is killed with SIGKILL its children live on; the next start
 * finds the owner dead and stops the leftovers before starting fresh ones.
 */
interface RunRecord {
  owner: number;
  children: { pid: number; marker: string }[];
  /** Where the console answers once it is ready, for the command-line tools that print links to it. */
  consoleUrl?: string;
}

/** The console URL of the `npm start` that owns `dataDir` and is still running, or undefined. */
export function runningConsoleUrl(dataDir: string): string | undefined {
  try {
    const record = JSON.parse(fs.readFileSync(path.join(dataDir, "run.json"), "utf8")) as RunRecord;
    return isProcessAlive(record.owner) ? record.consoleUrl : undefined;
  } catch {
    return undefined;
  }
}

/** Guards against a recycled pid: only a process whose command line still names the marker. */
function commandLineIncludes(pid: number, marker: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(marker);
  } catch {
    return false;
  }
}

export class RunRegistry {
  private readonly file: string;
  private record: RunRecord;

  constructor(dataDir: string) {
    this.file = path.join(dataDir, "run.json");
    this.record = { owner: process.pid, children: [] };
  }

  /** Stops what a dead previous run left behind; refuses when the previous run is alive. */
  async reclaimLeftovers(): Promise<number> {
    let previous: RunRecord | undefined;
    try {
      previous = JSON.parse(fs.readFileSync(this.file, "utf8")) as RunRecord;
    } catch {
      return 0;
    }
    if (previous.owner !== process.pid && isProcessAlive(previous.owner)) {
      throw new Error(`another Onceboard (pid ${previous.owner}) is running with this data directory; stop it first`);
    }
    const leftovers = previous.children.filter((c) => isProcessAlive(c.pid) && commandLineIncludes(c.pid, c.marker));
    for (const child of leftovers) process.kill(child.pid, "SIGTERM");
    const deadline = Date.now() + 10_000;
    while (leftovers.some((c) => isProcessAlive(c.pid)) && Date.now() < deadline) await sleep(100);
    for (const child of leftovers) if (isProcessAlive(child.pid)) process.kill(child.pid, "SIGKILL");
    fs.rmSync(this.file, { force: true });
    return leftovers.length;
  }

  add(pid: number | undefined, marker: string): void {
    if (!pid) return;
    this.record.children.push({ pid, marker });
    this.save();
  }

  setConsoleUrl(url: string): void {
    this.record.consoleUrl = url;
    this.save();
  }

  save(): void {
    try {
      fs.mkdirSync(path.dirname(this.file), { recursive: true });
      fs.writeFileSync(this.file, JSON.stringify(this.record));
    } catch (error) {
      throw new Error(
        `cannot write ${this.file} (ONCEBOARD_DATA_DIR): ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  clear(): void {
    fs.rmSync(this.file, { force: true });
  }
}
