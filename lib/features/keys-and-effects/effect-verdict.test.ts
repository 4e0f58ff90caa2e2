import { describe, expect, it } from "vitest";
import { effectVerdict } from "./effect-verdict";

const ranOnce = { status: "completed", policy: "at-least-once", attempts: 1, stuck: false };

describe("effectVerdict", () => {
  it("counts duplicates with the right plural and a whole-unit gap", () => {
    expect(effectVerdict({ ...ranOnce, duplicateCount: 3, lastDuplicateGapSeconds: 49.4 })).toBe(
      "ran once, 3 duplicates suppressed, last 49 s after the first",
    );
    expect(effectVerdict({ ...ranOnce, duplicateCount: 1, lastDuplicateGapSeconds: 7200 })).toBe(
      "ran once, 1 duplicate suppressed, last 2 h after the first",
    );
    expect(effectVerdict({ ...ranOnce, duplicateCount: 0, lastDuplicateGapSeconds: null })).toBe("ran once, no duplicates");
  });

  it("says how many earlier attempts failed", () => {
    const retried = { ...ranOnce, duplicateCount: 0, lastDuplicateGapSeconds: null };
    expect(effectVerdict({ ...retried, attempts: 2 })).toMatch(/^completed on attempt 2 \(1 earlier attempt failed/);
    expect(effectVerdict({ ...retried, attempts: 3 })).toMatch(/^completed on attempt 3 \(2 earlier attempts failed/);
  });
});
