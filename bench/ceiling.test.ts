import { describe, expect, it } from "vitest";
import { onceCeiling } from "./ceiling";

describe("the ceiling of fresh once calls", () => {
  it("is the callers over the two statements' latency when the CPU is ample", () => {
    const c = onceCeiling([{ size: 8, latencyMs: 2, cpuUsPerKey: 10 }], 16, 2);
    expect(c.perSecond).toBeCloseTo(8000);
    expect(c.limitedBy).toBe("latency");
    expect(c.split).toEqual([{ size: 8, callers: 16 }]);
  });

  it("is the cores over the CPU per call when that is less", () => {
    const c = onceCeiling([{ size: 1, latencyMs: 1, cpuUsPerKey: 500 }], 16, 2);
    expect(c.perSecond).toBeCloseTo(4000);
    expect(c.limitedBy).toBe("cpu");
  });

  it("splits the callers over two wave sizes when that beats either alone", () => {
    // Alone: small waves are CPU-bound at 5,000/s, large ones latency-bound at 4,000/s. Split so
    // the CPU is exactly used: x1 + x16 = 16 and 0.4·x1 + 0.0125·x16 = 2 → x16 = 4.4/0.3875.
    const c = onceCeiling(
      [
        { size: 1, latencyMs: 1, cpuUsPerKey: 400 },
        { size: 16, latencyMs: 4, cpuUsPerKey: 50 },
      ],
      16,
      2,
    );
    const x16 = 4.4 / 0.3875;
    expect(c.perSecond).toBeCloseTo((16 - x16) * 1000 + x16 * 250);
    expect(c.split.map((s) => s.size)).toEqual([1, 16]);
    expect(c.limitedBy).toBe("cpu");
  });

  it("ignores waves larger than the callers in flight, and CPU it could not measure", () => {
    const c = onceCeiling(
      [
        { size: 8, latencyMs: 2, cpuUsPerKey: null },
        { size: 32, latencyMs: 2.5, cpuUsPerKey: null },
      ],
      16,
      2,
    );
    expect(c.perSecond).toBeCloseTo(8000);
    expect(() => onceCeiling([{ size: 32, latencyMs: 1, cpuUsPerKey: 1 }], 16, 2)).toThrow(/no wave size/);
  });
});
