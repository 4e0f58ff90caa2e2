import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");

/**
 * Every environment variable is read through lib/config (validated, documented in one
 * place). Passing process.env on to a child, or as a default argument of a config loader, is not a
 * read; `process.env.NAME` and `process.env[...]` are.
 */
const ALLOWED = new Map<string, string>([
  // The parent → child hand-over of the soak's worker settings (JSON), not configuration.
  ["lib/soak/worker-main.ts", "ONCEBOARD_SOAK_WORKER"],
  // Runs before the Prisma client exists (postinstall); sets Prisma's own variable for its CLI.
  ["scripts/prisma-generate.mjs", "PRISMA_SCHEMA_ENGINE_BINARY"],
  // Node's own variable, read to honour the flag in it (--unhandled-rejections=strict) that Next.js would otherwise defeat.
  ["scripts/console-server.ts", "NODE_OPTIONS"],
]);
/** The worker library's folders import nothing of this repository, lib/config included (their own reads: see the report). */
const LIBRARY = /^lib\/(idempotency|queues)\//;

function files(dir: string): string[] {
  return (
    fs
      .readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && /\.(ts|tsx|mjs)$/.test(e.name))
      .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name)))
      // Tests, and the test kit's node:test example (a file users copy, run with its own env), are exempt.
      .filter((f) => !f.includes("generated/") && !/\.test\.tsx?$|\.node-test\.ts$/.test(f))
  );
}

describe("environment variables", () => {
  it("are read only in lib/config.ts (outside the library's own folders)", () => {
    const reads: string[] = [];
    for (const file of ["lib", "scripts", "app", "components"].flatMap(files)) {
      if (file === "lib/config.ts" || LIBRARY.test(file)) continue;
      const text = fs.readFileSync(path.join(ROOT, file), "utf8");
      for (const match of text.matchAll(/process\.env(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[)/g)) {
        const name = match[1] ?? "[…]";
        if (ALLOWED.get(file) === name) continue;
        reads.push(`${file}: process.env.${name}`);
      }
    }
    expect(reads).toEqual([]);
  });
});
