import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { crashFaultLine } from "./handlers";
import { injectedCrash, restartLine } from "./supervisor";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-supervisor-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("the demo supervisor tells an injected crash from a real one", () => {
  it("calls a SIGKILL injected only when that worker logged its crash fault", () => {
    const log = path.join(dir, "demo-worker-0.log");
    fs.writeFileSync(log, `${JSON.stringify({ level: 40, msg: `${crashFaultLine(4242)} (capture)` })}\n`);
    expect(injectedCrash(log, 4242)).toBe(true);
    // An earlier run of the same marker (another pid) crashed on purpose; this one did not.
    expect(injectedCrash(log, 4243)).toBe(false);
    expect(injectedCrash(path.join(dir, "missing.log"), 4242)).toBe(false);
  });

  it("labels an injected crash as injected in the line it prints, and a real one not", () => {
    // What the terminal shows: the label, not only the helper above, is what the issue asked for.
    const log = path.join(dir, "demo-worker-1.log");
    fs.writeFileSync(log, `${JSON.stringify({ level: 40, msg: `${crashFaultLine(5151)} (capture)` })}\n`);
    const death = { code: null, signal: "SIGKILL" as const };
    expect(restartLine("demo-worker-1", death, { file: log, pid: 5151 })).toBe(
      "demo-worker-1 exited (SIGKILL, injected fault); starting it again",
    );
    expect(restartLine("demo-worker-1", death, { file: log, pid: 5152 })).toBe(
      "demo-worker-1 exited (SIGKILL); starting it again",
    );
    expect(restartLine("demo-worker-1", { code: 1, signal: null }, undefined)).toBe(
      "demo-worker-1 exited (code 1); starting it again",
    );
  });
});
