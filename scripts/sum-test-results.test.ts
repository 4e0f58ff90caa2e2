import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const SCRIPT = path.resolve(import.meta.dirname, "sum-test-results.mjs");
const run = promisify(execFile);
const dirs: string[] = [];

async function reports(files: Record<string, unknown>): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "onceboard-sum-"));
  dirs.push(dir);
  for (const [name, body] of Object.entries(files)) await fs.writeFile(path.join(dir, name), JSON.stringify(body));
  return dir;
}

afterAll(async () => {
  for (const dir of dirs) await fs.rm(dir, { recursive: true, force: true });
});

/** CI's last lines: the counts, and which test failed with its first error line (CI shows only the output's tail). */
describe("scripts/sum-test-results.mjs", () => {
  it("names each failed Vitest and Playwright test, and each browser test that passed only on its retry, with its first error line", async () => {
    const dir = await reports({
      "unit.json": {
        numPassedTests: 3,
        numFailedTests: 1,
        numPendingTests: 2,
        testResults: [
          {
            name: "/repo/lib/a.test.ts",
            status: "failed",
            assertionResults: [
              { status: "passed", fullName: "a passes" },
              {
                status: "failed",
                fullName: "a counts",
                failureMessages: ["AssertionError: expected 1 to be 2\n    at a.test.ts:3"],
              },
            ],
          },
        ],
      },
      "e2e.json": {
        stats: { expected: 4, unexpected: 1, skipped: 0, flaky: 1 },
        suites: [
          {
            title: "keys.spec.ts",
            specs: [],
            suites: [
              {
                title: "Keys",
                specs: [
                  {
                    title: "finds a key",
                    tests: [
                      {
                        projectName: "chromium",
                        status: "unexpected",
                        results: [
                          { error: { message: "\u001b[31mError: expect(locator).toBeVisible() failed\u001b[39m\n\nLocator: x" } },
                        ],
                      },
                    ],
                  },
                  {
                    title: "pages",
                    tests: [
                      {
                        projectName: "chromium",
                        status: "flaky",
                        results: [{ error: { message: "Test timeout of 60000ms exceeded." } }, {}],
                      },
                    ],
                  },
                ],
              },
            ],
          },
        ],
      },
    });
    const { stdout } = await run(process.execPath, [SCRIPT, dir]);
    const lines = stdout.trim().split("\n");
    expect(lines).toContain(
      "FAILED e2e.json: keys.spec.ts › Keys › finds a key [chromium]: Error: expect(locator).toBeVisible() failed",
    );
    expect(lines).toContain("FAILED unit.json: /repo/lib/a.test.ts: a counts: AssertionError: expected 1 to be 2");
    expect(lines.filter((line) => line.startsWith("FAILED"))).toHaveLength(2);
    // The flaky one counts as passed (stats.flaky) and is named, so an intermittent failure stays visible.
    expect(lines).toContain(
      "FLAKY (passed on retry) e2e.json: keys.spec.ts › Keys › pages [chromium]: Test timeout of 60000ms exceeded.",
    );
    expect(lines.at(-1)).toBe("8 passed, 2 failed, 2 skipped");
  });

  it("names a test file that failed outside any test (an import error) and counts a failed step when no test failed", async () => {
    const dir = await reports({
      "unit.json": {
        numPassedTests: 0,
        numFailedTests: 0,
        numRuntimeErrorTestSuites: 1,
        testResults: [
          { name: "/repo/lib/b.test.ts", status: "failed", message: "Failed to load url ./missing", assertionResults: [] },
        ],
      },
    });
    const { stdout } = await run(process.execPath, [SCRIPT, dir, "--failed-steps", "1"]);
    expect(stdout).toContain("FAILED unit.json: /repo/lib/b.test.ts: Failed to load url ./missing");
    expect(stdout.trim().split("\n").at(-1)).toBe("0 passed, 1 failed");
  });
});
