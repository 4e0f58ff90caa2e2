import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { isJsonLogLine, splitJsonLines } from "./next-server";

const collect = (stream: PassThrough) => {
  let text = "";
  stream.on("data", (chunk) => {
    text += chunk;
  });
  return () => text;
};

describe("the console's output under npm start", () => {
  it("sends JSON log lines to the log file and everything else to the terminal", async () => {
    const from = new PassThrough();
    const human = new PassThrough();
    const json = new PassThrough();
    const terminal = collect(human);
    const file = collect(json);
    splitJsonLines(from, human, json);
    const logLine = '{"level":"error","time":"2026-12-01T22:00:00.000Z","msg":"database unreachable"}';
    from.end(`   ▲ Next.js 16\n${logLine}\n{not json\n ✓ Ready in 1s\n`);
    await new Promise((resolve) => from.on("end", resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(file()).toBe(`${logLine}\n`);
    expect(terminal()).toBe("   ▲ Next.js 16\n{not json\n ✓ Ready in 1s\n");
  });

  it("takes only a JSON object as a log line", () => {
    expect(isJsonLogLine('{"msg":"x"}')).toBe(true);
    expect(isJsonLogLine("[1,2]")).toBe(false);
    expect(isJsonLogLine("{ partial")).toBe(false);
    expect(isJsonLogLine("plain")).toBe(false);
  });
});
