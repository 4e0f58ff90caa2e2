import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { crashFaultLine } from "./handlers";
import { INJECTED_FAULT_SUMMARY_MS, InjectedFaultSummary, injectedCrash, restartLine } from "./supervisor";

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

describe("the demo's injected crashes on the terminal", () => {
  /** A clock the test moves: scheduled calls run when it passes their time. */
  function manualClock() {
    let now = 0;
    let timers: { at: number; run: () => void; cancelled: boolean }[] = [];
    return {
      now: () => now,
      schedule(run: () => void, ms: number) {
        const timer = { at: now + ms, run, cancelled: false };
        timers.push(timer);
        return {
          cancel: () => {
            timer.cancelled = true;
          },
        };
      },
      advanceTo(t: number) {
        for (;;) {
          const next = timers.filter((x) => !x.cancelled && x.at <= t).sort((a, b) => a.at - b.at)[0];
          if (!next) break;
          now = next.at;
          timers = timers.filter((x) => x !== next);
          next.run();
        }
        now = t;
      },
    };
  }

  it("33 injected crashes in 39 minutes: at most one line a minute, and together they count every one", () => {
    const clock = manualClock();
    const said: { at: number; line: string }[] = [];
    const faults = new InjectedFaultSummary((line) => said.push({ at: clock.now(), line }), clock);
    // 33 crashes spread over 39 minutes, some in bursts (two workers in the same second).
    const crashes = Array.from({ length: 33 }, (_, i) => ({
      at: Math.floor((i * 39 * 60_000) / 33) + (i % 3 === 0 ? 0 : 400),
      marker: `demo-worker-${i % 4}`,
    }));
    for (const crash of crashes) {
      clock.advanceTo(crash.at);
      faults.record(crash.marker);
    }
    clock.advanceTo(40 * 60_000);
    faults.flush();
    expect(said.length).toBeLessThanOrEqual(40);
    for (let i = 1; i < said.length; i++)
      expect((said[i]?.at ?? 0) - (said[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(INJECTED_FAULT_SUMMARY_MS);
    const counted = said.reduce((sum, s) => sum + Number(/^(\d+) demo process/.exec(s.line)?.[1] ?? 0), 0);
    expect(counted).toBe(33);
    expect(said[0]?.line).toContain("injected, not a real crash");
    expect(said.at(-1)?.line).toContain("33 since start");
  });

  it("a burst of crashes is one line now and one a minute later, never one per crash", () => {
    const clock = manualClock();
    const said: string[] = [];
    const faults = new InjectedFaultSummary((line) => said.push(line), clock);
    for (let i = 0; i < 10; i++) {
      clock.advanceTo(i * 500);
      faults.record(`demo-worker-${i % 2}`);
    }
    expect(said).toHaveLength(1);
    clock.advanceTo(INJECTED_FAULT_SUMMARY_MS + 5000);
    expect(said).toHaveLength(2);
    expect(said[1]).toMatch(/^9 demo processes .*demo-worker-1 ×5, demo-worker-0 ×4; 10 since start$/);
  });
});
