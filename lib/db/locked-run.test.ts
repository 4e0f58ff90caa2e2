import { describe, expect, it } from "vitest";
import { type LockedRun, runLocked } from "./locked-run";

/** A run whose every phase writes what happened, in order. */
function recorded(overrides: Partial<LockedRun<string, string>> = {}) {
  const seen: string[] = [];
  const spec: LockedRun<string, string> = {
    start: async () => "run-1",
    busy: () => "busy",
    onStarted: (run) => void seen.push(`started ${run}`),
    steps: async (run) => {
      seen.push(`steps ${run}`);
      return "done";
    },
    failed: async (run, error) => `failed ${run}: ${(error as Error).message}`,
    release: async (run) => void seen.push(`release ${run}`),
    ...overrides,
  };
  return { seen, run: () => runLocked(spec) };
}

describe("runLocked", () => {
  it("tells the caller the run started before its steps, and lets the lock go after", async () => {
    const { seen, run } = recorded();
    expect(await run()).toBe("done");
    expect(seen).toEqual(["started run-1", "steps run-1", "release run-1"]);
  });

  it("answers a failed step with the failure recorded, never its throw", async () => {
    const { seen, run } = recorded({
      steps: async () => {
        throw new Error("provider down");
      },
    });
    expect(await run()).toBe("failed run-1: provider down");
    expect(seen).toEqual(["started run-1", "release run-1"]);
  });

  it("answers busy when another runner holds the lock, starts nothing, and still lets go", async () => {
    const { seen, run } = recorded({ start: async () => null });
    expect(await run()).toBe("busy");
    expect(seen).toEqual(["release null"]);
  });
});
