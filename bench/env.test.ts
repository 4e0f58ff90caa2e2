import { describe, expect, it } from "vitest";
import { BenchSettingError, parseBenchChoice, parseBenchNumber } from "./env";

describe("a benchmark's numeric setting", () => {
  it("falls back when unset or blank, and reads numbers with or without digit separators", () => {
    expect(parseBenchNumber("BENCH_SECONDS", undefined, 4)).toBe(4);
    expect(parseBenchNumber("BENCH_SECONDS", "  ", 4)).toBe(4);
    expect(parseBenchNumber("BENCH_SECONDS", "0.25", 4)).toBe(0.25);
    expect(parseBenchNumber("BENCH_LOOKUP_ROWS", "1_000_000", 10, { integer: true })).toBe(1_000_000);
  });

  it.each([
    ["BENCH_SECONDS", "banana", {}, 'BENCH_SECONDS must be a number above 0 (got "banana")'],
    ["BENCH_SECONDS", "0", {}, 'BENCH_SECONDS must be a number above 0 (got "0")'],
    ["BENCH_SECONDS", "Infinity", {}, 'BENCH_SECONDS must be a number above 0 (got "Infinity")'],
    ["BENCH_ROUNDS", "2.5", { integer: true }, 'BENCH_ROUNDS must be a whole number ≥ 1 (got "2.5")'],
    ["BENCH_ROUNDS", "-3", { integer: true }, 'BENCH_ROUNDS must be a whole number ≥ 1 (got "-3")'],
  ] as const)("refuses %s=%s naming the variable", (name, raw, rule, message) => {
    expect(() => parseBenchNumber(name, raw, 1, rule)).toThrow(new BenchSettingError(message));
  });
});

describe("a benchmark's named setting", () => {
  it("falls back to the first choice and refuses anything else, naming the choices", () => {
    expect(parseBenchChoice("BENCH_E2E_HANDLER", undefined, ["job", "once"])).toBe("job");
    expect(parseBenchChoice("BENCH_E2E_HANDLER", "once", ["job", "once"])).toBe("once");
    expect(() => parseBenchChoice("BENCH_E2E_HANDLER", "twice", ["job", "once"])).toThrow(
      new BenchSettingError('BENCH_E2E_HANDLER must be job or once (got "twice")'),
    );
  });
});
