import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const EXAMPLE = path.join(import.meta.dirname, "demo-pipeline.node-test.ts");

describe("no framework lock-in", () => {
  // The example file is run directly (`node file` runs its node:test tests in that process and
  // exits non-zero on a failure), which spares the --test runner's extra process.
  it("the kit runs under node:test (a child `node --import tsx` on the example file)", async () => {
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", "tsx", EXAMPLE], {
        cwd: path.resolve(import.meta.dirname, "../../.."),
        env: { ...process.env, KIT_DATABASE_URL: db.sqlUrl, NODE_OPTIONS: "" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let output = "";
      child.stdout.on("data", (chunk) => {
        output += chunk;
      });
      child.stderr.on("data", (chunk) => {
        output += chunk;
      });
      child.on("error", reject);
      child.on("exit", (exitCode) => resolve({ code: exitCode, output }));
    });
    expect(output).toMatch(/# pass 2/);
    expect(output).toMatch(/# fail 0/);
    expect(code, output).toBe(0);
  });
});
