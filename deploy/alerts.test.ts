import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const DEPLOY = import.meta.dirname;
const promtool = spawnSync("promtool", ["--version"], { encoding: "utf8" });
const available = promtool.status === 0;
if (!available) {
  const message = "promtool not found (Debian: apt-get install prometheus): the alert-rule tests are SKIPPED";
  if (process.env.CI === "true") throw new Error(`${message} — required under CI`);
  console.warn(`\n!!! ${message}\n`);
}

describe.skipIf(!available)("Prometheus config and alert rules", () => {
  const run = (...args: string[]) => spawnSync("promtool", args, { cwd: DEPLOY, encoding: "utf8" });

  it("alerts.yml passes promtool check rules", () => {
    const result = run("check", "rules", "alerts.yml");
    expect(result.stdout + result.stderr).toMatch(/SUCCESS: 5 rules found/);
    expect(result.status).toBe(0);
  });

  it("prometheus.yml passes promtool check config", () => {
    const result = run("check", "config", path.join(DEPLOY, "prometheus.yml"));
    expect(result.status, result.stdout + result.stderr).toBe(0);
  });

  it("each alert fires on its pattern and stays quiet otherwise (promtool test rules)", () => {
    const result = run("test", "rules", "alerts.promtest.yml");
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/SUCCESS/);
  });
});
