import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const KIT = path.resolve(import.meta.dirname, "..");

/** The kit's own modules (not its tests or examples). */
const kitFiles = fs.readdirSync(KIT).filter((f) => f.endsWith(".ts"));

describe("the kit's imports", () => {
  it("are the worker library, pg, prom-client and node: — no test framework, no console, no Next/React", () => {
    expect(kitFiles.sort()).toEqual(["check.ts", "diff.ts", "index.ts", "kit-database.ts", "observe-steps.ts", "report.ts"]);
    for (const file of kitFiles) {
      const source = fs.readFileSync(path.join(KIT, file), "utf8");
      const specifiers = [...source.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"/gm)].map((m) => m[1]!);
      for (const spec of specifiers) {
        // The kit is the library's own: its modules (../<module>) are in reach, nothing above them.
        const ok = spec.startsWith("node:") || ["pg", "prom-client"].includes(spec) || /^\.\.?\/[\w-]+$/.test(spec);
        expect(ok, `${file} imports ${spec}`).toBe(true);
      }
    }
  });
});
