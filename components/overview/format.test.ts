import { describe, expect, it } from "vitest";
import { formatMeasure } from "./format";

describe("formatMeasure (chart values and ticks)", () => {
  it("keeps small fractional ticks apart and prints whole numbers as counts", () => {
    const ticks = [0, 0.0025, 0.005, 0.0075, 0.01].map(formatMeasure);
    expect(new Set(ticks).size).toBe(ticks.length);
    expect(ticks).toEqual(["0", "0.0025", "0.005", "0.0075", "0.01"]);
    expect(formatMeasure(12_345)).toBe("12,345");
    expect(formatMeasure(1.23456)).toBe("1.23");
  });
});
