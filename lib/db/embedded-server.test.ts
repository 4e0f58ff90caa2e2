import { spawn } from "node:child_process";
import { once } from "node:events";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { startEmbeddedPostgres } from "./embedded";
import { stopServer } from "./embedded-server";

/** A stand-in for the server process: a Node child that starts and then reacts to SIGINT as told. */
async function child(onSigint: "exit" | "ignore") {
  const script =
    onSigint === "exit"
      ? "process.on('SIGINT', () => process.exit(0)); setInterval(() => {}, 1000); console.log('up')"
      : "process.on('SIGINT', () => {}); setInterval(() => {}, 1000); console.log('up')";
  const c = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  await once(c.stdout, "data");
  return c;
}

describe("stopping the embedded server says how it stopped", () => {
  it("fast: the process exits on SIGINT within the allowance", async () => {
    expect(await stopServer(await child("exit"), 5000)).toBe("fast");
  });

  it("immediate: a process still up after the allowance gets SIGQUIT, and the caller is told", async () => {
    const c = await child("ignore");
    expect(await stopServer(c, 300)).toBe("immediate");
    expect(c.signalCode).toBe("SIGQUIT");
  });

  it("not running: a process that has exited already", async () => {
    const c = await child("exit");
    c.kill("SIGTERM");
    await once(c, "exit");
    expect(await stopServer(c)).toBe("not running");
  });

  it("a real server's stop is its fast shutdown, and a second stop finds it stopped", { timeout: 60_000 }, async () => {
    const handle = await startEmbeddedPostgres({
      dataDir: path.join(os.tmpdir(), `onceboard-stop-${process.pid}`),
      persistent: false,
    });
    expect(await handle.stop()).toBe("fast");
    expect(await handle.stop()).toBe("not running");
  });
});
