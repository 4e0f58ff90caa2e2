import { describe, expect, it } from "vitest";
import { percentile } from "./support";

describe("a benchmark's percentile", () => {
  it("is the nearest rank: the smallest value with at least p % of the values at or below it", () => {
    const values = Array.from({ length: 20 }, (_, i) => 20 - i); // 20, 19, …, 1: unsorted on purpose
    expect(percentile(values, 95)).toBe(19);
    expect(percentile(values, 50)).toBe(10);
    expect(percentile(values, 100)).toBe(20);
    expect(percentile(values, 0)).toBe(1);
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([], 95)).toBe(0);
  });
});
