import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");
/** The worker library's folders keep their own (they import nothing of this repository). */
const LIBRARY = /^lib\/(idempotency|queues)\//;

function sources(): { file: string; text: string }[] {
  return ["lib", "scripts", "test", "bench", "app", "components", "e2e", "deploy"]
    .flatMap((dir) =>
      fs
        .readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile() && /\.(ts|tsx|mjs)$/.test(e.name))
        .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name))),
    )
    .filter((file) => !file.includes("generated/") && !LIBRARY.test(file) && file !== "test/one-helper.test.ts")
    .map((file) => ({ file, text: fs.readFileSync(path.join(ROOT, file), "utf8") }));
}

/** One sleep helper and one scratch-database helper instead of a copy per file. */
describe("one helper each", () => {
  it("sleeps with node:timers/promises, never a hand-rolled setTimeout promise", () => {
    const copies = sources()
      .filter(({ text }) => /const sleep = |new Promise(<void>)?\(\((r|resolve)\) => setTimeout\(\2, /.test(text))
      .map(({ file }) => file);
    expect(copies).toEqual([]);
  });

  it("makes throw-away databases with lib/db/scratch.ts only", () => {
    const copies = sources()
      .filter(({ file, text }) => file !== "lib/db/scratch.ts" && /["'`](CREATE|DROP) DATABASE/.test(text))
      .map(({ file }) => file);
    expect(copies).toEqual([]);
  });
});
