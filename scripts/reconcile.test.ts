import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { noFaults } from "../lib/demo/stripe-server";
import { type Harness, startHarness, TEST_STRIPE_KEY } from "../lib/reconciliation/testing/harness";

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return cliWith({}, ...args);
}

function cliWith(
  extraEnv: Record<string, string>,
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "reconcile.ts"), ...args], {
      env: {
        ...process.env,
        DATABASE_URL: h.db.url,
        ONCEBOARD_PROVIDERS_FILE: h.providersFile,
        STRIPE_API_KEY: TEST_STRIPE_KEY,
        STRIPE_HOST: "127.0.0.1",
        STRIPE_PORT: String(h.server.port),
        STRIPE_PROTOCOL: "http",
        ...extraEnv,
      },
    });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    proc.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    proc.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("npm run reconcile", () => {
  it("ends with the summary line, and fails with the reason (no summary) when the provider cannot be read", async () => {
    await h.capture("acme", "o-1", 100);
    h.server.faults = { ...noFaults(), rates: { ...noFaults().rates, duplicate: 1 } };
    await h.capture("acme", "o-2", 100, { retryAfterCharge: true });
    h.server.faults = noFaults();
    const window = ["--from", h.window.from.toISOString(), "--to", h.window.to.toISOString(), "--grace-seconds", "0"];
    const ok = await cli("--provider", "stripe", ...window);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout.trim().split("\n").at(-1)).toBe(
      "reconcile matched=1 duplicated_at_provider=1 missing_at_provider=0 unknown_to_onceboard=0 drift=0 pending=0",
    );
    h.server.faults = { ...noFaults(), malformedNext: 1 };
    const failed = await cli("--provider", "stripe", ...window);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/onceboard: run \d+ failed: Stripe answered with malformed JSON/);
    expect(failed.stdout).not.toMatch(/^reconcile /m);
    const bad = await cli("--provider", "stripe", "--from", "yesterday");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--from needs a time/);
  }, 120_000);

  it("refuses a providers file with mistakes, one line per mistake, before reading anything", async () => {
    const file = path.join(path.dirname(h.providersFile), "bad.json");
    const stripe = JSON.parse(fs.readFileSync(h.providersFile, "utf8")).providers[0];
    fs.writeFileSync(file, JSON.stringify({ providers: [{ ...stripe, jobTypes: [], steps: [{ keyPrefix: "settle" }] }] }));
    const window = ["--from", h.window.from.toISOString(), "--to", h.window.to.toISOString()];
    const bad = await cliWith({ ONCEBOARD_PROVIDERS_FILE: file }, "--provider", "stripe", ...window);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split("\n")).toEqual([
      `onceboard: invalid configuration: ONCEBOARD_PROVIDERS_FILE (${file}) has 2 mistakes:`,
      "  providers.0.jobTypes must list at least one job type",
      '  providers.0.steps.0.keyPrefix must start with a step name and ":", like "settle:"',
    ]);
    const unknown = await cli("--provider", "paypal", ...window);
    expect(unknown.stderr.trim()).toBe(`onceboard: unknown provider "paypal": ${h.providersFile} names stripe`);
  }, 120_000);
});
