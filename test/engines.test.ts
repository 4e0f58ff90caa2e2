import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");

/**
 * `npm install` on this Node prints no EBADENGINE warning that the README does not
 * explain, and the README states the real Node floor (package.json `engines`).
 */
describe("npm install on this Node", () => {
  it("warns about no engine the README does not name, and the README states the floor package.json declares", async () => {
    const { stdout, stderr } = await promisify(execFile)(
      "npm",
      ["install", "--dry-run", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund"],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
    );
    const warned = [...`${stdout}\n${stderr}`.matchAll(/EBADENGINE\s+package: '(@?[^@']+)@/g)].map((m) => m[1]!);
    const readme = await fs.readFile(path.join(ROOT, "README.md"), "utf8");
    const note = readme.split("\n\n").find((paragraph) => paragraph.includes("EBADENGINE")) ?? "";
    for (const name of new Set(warned))
      expect(note, `EBADENGINE from ${name}, which the README does not explain`).toContain(`\`${name}\``);

    const manifest = JSON.parse(await fs.readFile(path.join(ROOT, "package.json"), "utf8")) as { engines: { node: string } };
    const floor = manifest.engines.node.match(/^>=(\d+\.\d+)(?:\.0)?$/)?.[1];
    expect(floor, `engines.node is ${manifest.engines.node}`).toBeDefined();
    expect(readme).toContain(`Node ${floor}+`);
    // Prisma 7 (the CLI and the client) needs ^20.19 on Node 20: a lower floor would warn from Prisma too.
    const lock = JSON.parse(await fs.readFile(path.join(ROOT, "package-lock.json"), "utf8")) as {
      packages: Record<string, { engines?: { node?: string } }>;
    };
    expect(lock.packages["node_modules/prisma"]?.engines?.node).toMatch(/^\^20\.19\b/);
    expect(floor).toBe("20.19");
  }, 120_000);
});
