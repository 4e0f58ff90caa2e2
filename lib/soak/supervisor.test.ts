import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { sendToWorker } from "./supervisor";

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
