import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { SoakWorkerConfig } from "./protocol";
import { sendToWorker, startWorkerPool } from "./supervisor";

/** Blocks the event loop, so the child's death is not yet seen when the next line runs. */
const blockFor = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

describe("the supervisor's messages to its workers", () => {
  it("a message to a worker that died before its exit was seen is dropped, not an 'error' that ends the supervisor", async () => {
    const child = spawn(process.execPath, ["-e", "process.on('message', () => {}); setInterval(() => {}, 1000)"], {
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    });
    await once(child, "spawn");
    const errors: Error[] = [];
    child.on("error", (error) => errors.push(error));
    const exited = once(child, "exit");
    child.kill("SIGKILL");
    blockFor(300); // the process is gone; Node has not read its exit, so `connected` is still true
    expect(child.connected).toBe(true);
    sendToWorker(child, { type: "arm" });
    await exited;
    // Without the callback the EPIPE is emitted as 'error' (with no listener: an uncaught exception).
    expect(errors.map((e) => (e as NodeJS.ErrnoException).code)).toEqual([]);
  });
});

/**
 * Two workers that misbehave at the graceful stop, in place of the soak's own: worker 0 never
 * stops; worker 1 stops, but says its last flush left 3 duplicate claims unwritten and that 2
 * duplicate counts found no effect row.
 */
const MISBEHAVING_WORKER = `
const { index } = JSON.parse(process.env.ONCEBOARD_SOAK_WORKER);
process.on("disconnect", () => process.exit(0));
process.on("message", (m) => {
  if (m.type !== "stop" || index === 0) return;
  process.send({ type: "stopped", unflushedDuplicateClaims: 3, droppedDuplicateCounts: 2 });
  setTimeout(() => process.exit(0), 50);
});
setInterval(() => {}, 1000);
process.send({ type: "ready" });
`;

describe("the supervisor's graceful stop", () => {
  it("counts a worker SIGKILLed at the stop's deadline and what a stopped worker's last flush could not write", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-soak-stop-"));
    try {
      const workerEntry = path.join(dir, "misbehaving-worker.mjs");
      fs.writeFileSync(workerEntry, MISBEHAVING_WORKER);
      const lines: string[] = [];
      const pool = await startWorkerPool({
        workers: 2,
        config: {} as Omit<SoakWorkerConfig, "index" | "noteFile">,
        noteDir: dir,
        log: (line) => lines.push(line),
        workerEntry,
      });
      for (let waited = 0; pool.readyCount() < 2; waited += 50) {
        if (waited > 20_000) throw new Error("the workers never said they were ready");
        await sleep(50);
      }
      const pids = pool.pids();
      await pool.stop(1_000);
      expect(pool.stats.atStop).toEqual({ unflushedDuplicateClaims: 3, killedAtDeadline: 1 });
      expect(pool.stats.droppedDuplicateCounts).toBe(2);
      // Asked to stop, neither exit is "unexpected", and no kill note makes the deadline's SIGKILL a soak kill.
      expect(pool.stats.unexpectedExits).toBe(0);
      expect(pool.stats.kills).toBe(0);
      expect(lines).toEqual([
        expect.stringMatching(/^worker 0 \(pid \d+\) had not stopped 1 s after it was asked to: SIGKILLed/),
      ]);
      for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
