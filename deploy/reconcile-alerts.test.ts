import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

const DEPLOY = import.meta.dirname;
const available = spawnSync("promtool", ["--version"], { encoding: "utf8" }).status === 0;
if (!available) {
  const message = "promtool not found (Debian: apt-get install prometheus): the reconciliation alert tests are SKIPPED";
  if (process.env.CI === "true") throw new Error(`${message} — required under CI`);
  console.warn(`\n!!! ${message}\n`);
}

describe.skipIf(!available)("reconciliation alert rules", () => {
  const run = (...args: string[]) => spawnSync("promtool", args, { cwd: DEPLOY, encoding: "utf8" });

  it("reconcile-alerts.yml passes promtool check rules", () => {
    const result = run("check", "rules", "reconcile-alerts.yml");
    expect(result.stdout + result.stderr).toMatch(/SUCCESS: 3 rules found/);
    expect(result.status).toBe(0);
  });

  it("a duplicate charge pages, lasting findings and failing runs open tickets, each on its pattern only (promtool test rules)", () => {
    const result = run("test", "rules", "reconcile-alerts.promtest.yml");
    expect(result.status, result.stdout + result.stderr).toBe(0);
  });
});
