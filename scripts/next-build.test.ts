import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script, typed by its use here
import { edgeRuntimeWarnings } from "./next-build.mjs";

// Turbopack's words for one use, with its colours, as `next build` printed them before
// instrumentation.ts imported the console's start only inside its runtime check.
const WARNED = [
  "\u001b[33m\u001b[1m⚠\u001b[22m\u001b[39m Turbopack build encountered 2 warnings:",
  "./lib/idempotency/options.ts:233:55",
  "Warning: A Node.js API is used (process.pid at line: 233) which is not supported in the Edge Runtime.",
  "    Learn more: https://nextjs.org/docs/api-reference/edge-runtime",
  "  \u001b[90m231 |\u001b[0m ...tions.coalesce ?? \u001b[36mtrue\u001b[0m,",
  "",
  "Import traces:",
  "  Edge Instrumentation:",
  "    ./lib/idempotency/options.ts",
  "    ./instrumentation.ts",
  "",
  "./lib/idempotency/maintenance.ts:278:56",
  "Warning: A Node.js API is used (process.pid at line: 278) which is not supported in the Edge Runtime.",
].join("\n");

describe("edgeRuntimeWarnings", () => {
  it("names each Edge-runtime warning's file, line and API", () => {
    expect(edgeRuntimeWarnings(WARNED)).toEqual([
      "lib/idempotency/options.ts:233:55 (process.pid at line: 233)",
      "lib/idempotency/maintenance.ts:278:56 (process.pid at line: 278)",
    ]);
  });

  it("finds nothing in a clean build's output", () => {
    expect(edgeRuntimeWarnings("✓ Compiled successfully in 40s\n✓ Generating static pages (7/7)\n")).toEqual([]);
  });

  it("keeps a warning whose location line is missing", () => {
    expect(edgeRuntimeWarnings("A Node.js API is used (setImmediate) which is not supported in the Edge Runtime.")).toEqual([
      "(no location) (setImmediate)",
    ]);
  });
});
