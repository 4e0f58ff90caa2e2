import { describe, expect, it } from "vitest";
import { createEventLogger, safeForLog } from "./log-safe";

function capture() {
  const lines: string[] = [];
  const log = createEventLogger({ write: (chunk: string) => void lines.push(chunk) });
  return { lines, log };
}

describe("the console's JSON log lines (pino)", () => {
  it("write one JSON object per line with level, ISO time, message and fields", () => {
    const { lines, log } = capture();
    log("error", "unhandled error in a route handler", { err: "boom", status: 500 });
    expect(lines).toHaveLength(1);
    expect(lines[0]?.endsWith("\n")).toBe(true);
    const entry = JSON.parse(lines[0] as string);
    expect(entry).toEqual({
      level: "error",
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      msg: "unhandled error in a route handler",
      err: "boom",
      status: 500,
    });
  });

  it("cannot be made to forge a second entry or drive a terminal by a request value", () => {
    const { lines, log } = capture();
    const key = 'a\n{"level":"info","msg":"forged"}\u001b[2J\u2028';
    log("warn", `refused ${key}`, { key });
    expect(lines).toHaveLength(1);
    expect(lines[0]?.split("\n").filter(Boolean)).toHaveLength(1);
    const entry = JSON.parse(lines[0] as string);
    expect(entry.key).toBe(safeForLog(key));
    expect(entry.key).toContain("\\u000a");
    expect(entry.key).toContain("\\u001b");
    expect(entry.key).toContain("\\u2028");
    expect(entry.msg).toBe(`refused ${safeForLog(key)}`);
    expect(lines[0]).not.toContain("\u2028");
  });

  it("cuts long values", () => {
    const { lines, log } = capture();
    log("info", "x", { key: "k".repeat(1000) });
    expect(JSON.parse(lines[0] as string).key).toBe(`${"k".repeat(300)}…`);
  });
});
