import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const DEPLOY = import.meta.dirname;
const available = spawnSync("promtool", ["--version"], { encoding: "utf8" }).status === 0;
if (!available) {
  const message = "promtool not found (Debian: apt-get install prometheus): the retention alert tests are SKIPPED";
  if (process.env.CI === "true") throw new Error(`${message} — required under CI`);
  console.warn(`\n!!! ${message}\n`);
}

describe.skipIf(!available)("retention alert rules", () => {
  const run = (...args: string[]) => spawnSync("promtool", args, { cwd: DEPLOY, encoding: "utf8" });

  it("retention-alerts.yml passes promtool check rules", () => {
    const result = run("check", "rules", "retention-alerts.yml");
    expect(result.stdout + result.stderr).toMatch(/SUCCESS: 3 rules found/);
    expect(result.status).toBe(0);
  });

  it("runway, stale maintenance and missing partition each fire on their pattern only (promtool test rules)", () => {
    const result = run("test", "rules", "retention-alerts.promtest.yml");
    expect(result.status, result.stdout + result.stderr).toBe(0);
  });
});
