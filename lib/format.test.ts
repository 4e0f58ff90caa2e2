import { describe, expect, it } from "vitest";
import {
  formatBytes,
  formatCount,
  formatCountOf,
  formatDuration,
  formatElapsed,
  formatGap,
  formatMeasure,
  formatMilliseconds,
  formatUtc,
  formatUtcClock,
  formatUtcDay,
  formatUtcTick,
} from "./format";

describe("formatUtc", () => {
  it("writes one style, in UTC whatever the input's offset", () => {
    expect(formatUtc("2026-12-01T20:08:30.123Z")).toBe("2026-12-01 20:08:30 UTC");
    expect(formatUtc("2026-12-01T21:08:30+01:00")).toBe("2026-12-01 20:08:30 UTC");
    expect(formatUtc(Date.UTC(2026, 0, 2, 3, 4, 5))).toBe("2026-01-02 03:04:05 UTC");
    expect(formatUtc(new Date("2026-12-01T00:00:00Z"), { seconds: false })).toBe("2026-12-01 00:00 UTC");
  });

  it("shows midnight as 00, not 24", () => {
    expect(formatUtc("2026-12-01T00:00:00Z")).toBe("2026-12-01 00:00:00 UTC");
  });

  it("writes the empty text for a missing or invalid time", () => {
    expect(formatUtc(null)).toBe("—");
    expect(formatUtc(undefined, { empty: "–" })).toBe("–");
    expect(formatUtc("not a time")).toBe("—");
  });

  it("has a day and a clock in the same style", () => {
    expect(formatUtcDay("2026-12-01T23:59:59Z")).toBe("2026-12-01");
    expect(formatUtcClock(Date.UTC(2026, 11, 1, 0, 5, 9))).toBe("00:05:09 UTC");
  });
});

describe("formatDuration", () => {
  it.each([
    [0, "0 s"],
    [0.25, "0.25 s"],
    [45, "45 s"],
    [59.99, "60 s"],
    [60, "1 min"],
    [900, "15 min"],
    [3600, "1 h"],
    [4 * 3600, "4 h"],
    [86_400 * 7, "7 d"],
    [298_944, "3.46 d"],
    [86_400 * 365, "365 d"],
    [86_400 * 1234, "1,234 d"],
  ])("%d s is %s", (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
  });

  it("rounds to whole units when asked", () => {
    expect(formatDuration(49.37, { whole: true })).toBe("49 s");
    expect(formatDuration(750, { whole: true })).toBe("13 min");
  });

  it("says when there is no value or no bound", () => {
    expect(formatDuration(null)).toBe("—");
    expect(formatDuration(undefined)).toBe("—");
    expect(formatDuration(Number.NaN)).toBe("—");
    expect(formatDuration(Number.POSITIVE_INFINITY)).toBe("∞");
  });
});

describe("counts", () => {
  it("groups thousands", () => {
    expect(formatCount(1234567)).toBe("1,234,567");
    expect(formatCount(12.6)).toBe("13");
  });

  it("chooses singular or plural with Intl.PluralRules", () => {
    expect(formatCountOf(0, "key")).toBe("0 keys");
    expect(formatCountOf(1, "key")).toBe("1 key");
    expect(formatCountOf(2, "key")).toBe("2 keys");
    expect(formatCountOf(1, "entry", "entries")).toBe("1 entry");
    expect(formatCountOf(1500, "entry", "entries")).toBe("1,500 entries");
  });
});

describe("formatBytes", () => {
  it.each([
    [512, "512 B"],
    [8 * 1024, "8 KiB"],
    [12 * 1024 ** 2, "12.0 MiB"],
    [1.5 * 1024 ** 3, "1.5 GiB"],
  ])("%d bytes is %s", (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });
});

describe("formatMeasure (chart values and ticks)", () => {
  it("keeps small fractional ticks apart and prints whole numbers as counts", () => {
    const ticks = [0, 0.0025, 0.005, 0.0075, 0.01].map(formatMeasure);
    expect(new Set(ticks).size).toBe(ticks.length);
    expect(ticks).toEqual(["0", "0.0025", "0.005", "0.0075", "0.01"]);
    expect(formatMeasure(12_345)).toBe("12,345");
    expect(formatMeasure(1.23456)).toBe("1.23");
  });
});

describe("formatUtcTick and formatElapsed", () => {
  it("writes a chart tick in UTC, with the day when the chart spans days", () => {
    const at = Date.UTC(2026, 11, 1, 23, 5, 9);
    expect(formatUtcTick(at)).toBe("23:05");
    expect(formatUtcTick(at, { withDate: true })).toBe("12-01 23:05");
  });

  it("writes an uptime in whole units, two of them past two hours", () => {
    expect(formatElapsed(45)).toBe("45 s");
    expect(formatElapsed(17 * 60 + 5)).toBe("17 min");
    expect(formatElapsed(3 * 3600 + 12 * 60)).toBe("3 h 12 min");
    expect(formatElapsed(2 * 86_400 + 5 * 3600)).toBe("2 d 5 h");
  });
});

describe("formatGap and formatMilliseconds", () => {
  it("writes a gap between deliveries with its sign, and under a millisecond as at once", () => {
    expect(formatGap(0.5)).toBe("+0.5 s");
    expect(formatGap(19)).toBe("+19 s");
    expect(formatGap(3 * 86_400 + 40_000)).toBe("+3.46 d");
    expect(formatGap(0)).toBe("at once");
  });

  it("writes a claim's time in milliseconds below a second", () => {
    expect(formatMilliseconds(0.412)).toBe("0.412 ms");
    expect(formatMilliseconds(480)).toBe("480 ms");
    expect(formatMilliseconds(2350)).toBe("2.35 s");
  });
});
