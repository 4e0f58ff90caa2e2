import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { demoProvidersFile } from "../lib/demo/providers-file";
import { JOB_TYPES } from "../lib/demo/settings";

const ROOT = path.resolve(import.meta.dirname, "..");

/**
 * The console and the library serve a user's own system: nothing outside the demo (lib/demo) and
 * the soak (lib/soak) names the demo's job types or its steps' key prefixes. Reconciliation once
 * hard-coded them (lib/reconciliation/providers.ts: order.paid, capture:, …), so a user's own
 * job types reconciled nothing and the Delivery gaps page named the demo's as Stripe's. Tests and
 * test kits may use the demo's words; the code a user runs may not.
 */
const SCANNED = ["lib", "app", "components"];
const EXEMPT = /^lib\/(demo|soak)\/|\.test\.tsx?$|\/test\/|\/testing\//;

/** The demo's names, from the demo itself, so a new demo job type is checked without editing this test. */
function demoNames(): string[] {
  const prefixes = demoProvidersFile({ mailerUrl: "http://unused" }).providers.flatMap((p) => p.steps.map((s) => s.keyPrefix));
  return [...new Set([...Object.values(JOB_TYPES), ...prefixes])];
}

/** Each file and line outside the demo that names one of `names`. */
function namesOutsideDemo(files: Record<string, string>, names: string[]): string[] {
  const found: string[] = [];
  for (const [file, text] of Object.entries(files)) {
    if (EXEMPT.test(file)) continue;
    text.split("\n").forEach((line, i) => {
      // A prefix counts at a word start ("capture:" but not "precapture:"); a job type anywhere.
      const named = names.filter((name) =>
        new RegExp(`(^|[^A-Za-z0-9_-])${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`).test(line),
      );
      for (const name of named) found.push(`${file}:${i + 1} names ${name}`);
    });
  }
  return found;
}

function sourceFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const dir of SCANNED) {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !/\.(ts|tsx|mjs)$/.test(entry.name)) continue;
      const file = path.relative(ROOT, path.join(entry.parentPath, entry.name));
      if (file.includes("generated/")) continue;
      files[file] = fs.readFileSync(path.join(ROOT, file), "utf8");
    }
  }
  return files;
}

describe("the demo's names stay in the demo", () => {
  it("knows the demo's job types and steps", () => {
    expect(demoNames()).toEqual(expect.arrayContaining(["order.paid", "order.capture", "capture:", "refund:", "receipt:"]));
  });

  it("finds none in lib/, app/ or components/ outside lib/demo and lib/soak (tests aside)", () => {
    expect(namesOutsideDemo(sourceFiles(), demoNames())).toEqual([]);
  });

  it("would find a hard-coded provider mapping like the one reconciliation had", () => {
    const planted = {
      "lib/reconciliation/providers.ts": `export const STRIPE_JOB_TYPES = ["order.paid", "order.capture"];\nkeyPrefixes: ["capture:", "refund:"],`,
      "lib/demo/handlers.ts": `job.external(\`capture:\${m.orderId}\`)`,
      "lib/console/x.test.ts": `"order.paid"`,
    };
    expect(namesOutsideDemo(planted, demoNames())).toEqual([
      "lib/reconciliation/providers.ts:1 names order.paid",
      "lib/reconciliation/providers.ts:1 names order.capture",
      "lib/reconciliation/providers.ts:2 names capture:",
      "lib/reconciliation/providers.ts:2 names refund:",
    ]);
  });
});
