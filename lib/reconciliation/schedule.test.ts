import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../config";
import { noFaults } from "../demo/stripe-server";
import { dueWindows, startReconcileSchedule } from "./schedule";
import { type Harness, startHarness, TEST_STRIPE_KEY } from "./testing/harness";

let h: Harness;
beforeEach(async () => {
  h = await startHarness();
});
afterEach(async () => {
  await h.close();
});

describe("reconciliation in the maintenance loop", () => {
  it("runs the rolling hour and each uncovered whole day, and reports runs and open findings as metrics", async () => {
    const now = new Date("2026-12-01T10:07:00Z");
    const config = loadConfig({
      DATABASE_URL: h.db.url,
      ONCEBOARD_PROVIDERS_FILE: h.providersFile,
      STRIPE_API_KEY: TEST_STRIPE_KEY,
      STRIPE_HOST: "127.0.0.1",
      STRIPE_PORT: String(h.server.port),
      STRIPE_PROTOCOL: "http",
      RECONCILE_INTERVAL_SECONDS: "0",
      RECONCILE_GRACE_SECONDS: "600",
    });
    const due = await dueWindows(h.db.pool, "stripe", 600, now);
    expect(due.map((w) => `${w.from.toISOString()}..${w.to.toISOString()}`)).toEqual([
      "2026-12-01T09:05:00.000Z..2026-12-01T10:05:00.000Z",
      "2026-11-28T00:00:00.000Z..2026-11-29T00:00:00.000Z",
      "2026-11-29T00:00:00.000Z..2026-11-30T00:00:00.000Z",
      "2026-11-30T00:00:00.000Z..2026-12-01T00:00:00.000Z",
    ]);
    const registry = new Registry();
    const schedule = startReconcileSchedule({ pool: h.db.pool, config, registry, now: () => now });
    await schedule.runOnce();
    // The days are covered now: the next pass runs only the rolling hour.
    expect(await dueWindows(h.db.pool, "stripe", 600, now)).toHaveLength(1);
    h.server.faults = { ...noFaults(), serverErrorNext: { count: 1000, status: 500 } };
    await schedule.runOnce();
    await schedule.stop();
    const text = await registry.metrics();
    expect(text).toContain('onceboard_reconcile_runs_total{provider="stripe",status="completed"} 4');
    expect(text).toContain('onceboard_reconcile_runs_total{provider="stripe",status="failed"} 1');
    expect(text).toContain('onceboard_reconcile_open_findings{provider="stripe",kind="duplicated_at_provider"} 0');
  }, 120_000);
});
