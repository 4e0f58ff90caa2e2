import pg from "pg";
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

describe("the schedule never leaves a rejection behind, and a read-only console never reconciles", () => {
  const stripeConfig = (extra: Record<string, string> = {}) =>
    loadConfig({
      DATABASE_URL: h.db.url,
      ONCEBOARD_PROVIDERS_FILE: h.providersFile,
      STRIPE_API_KEY: TEST_STRIPE_KEY,
      STRIPE_HOST: "127.0.0.1",
      STRIPE_PORT: String(h.server.port),
      STRIPE_PROTOCOL: "http",
      RECONCILE_INTERVAL_SECONDS: "0",
      ...extra,
    });

  it("a database that does not answer when the due windows are read: runOnce resolves, the failure is logged and counted", async () => {
    // Nothing listens on port 1: connecting fails at once, as a database that went away does.
    const gone = new pg.Pool({ connectionString: "postgresql://postgres@127.0.0.1:1/none", connectionTimeoutMillis: 2000 });
    gone.on("error", () => {});
    const lines: string[] = [];
    const registry = new Registry();
    const schedule = startReconcileSchedule({ pool: gone, config: stripeConfig(), registry, log: (line) => lines.push(line) });
    await expect(schedule.runOnce()).resolves.toBeUndefined();
    await schedule.stop();
    expect(lines.join("\n")).toMatch(/reconciliation of stripe not started: .*ECONNREFUSED|connect/);
    // The counter alone: the registry's gauges read the (gone) database when collected.
    const runs = await registry.getSingleMetric("onceboard_reconcile_runs_total")?.get();
    expect(runs?.values).toEqual([expect.objectContaining({ labels: { provider: "stripe", status: "failed" }, value: 1 })]);
    await gone.end();
  });

  it("CONSOLE_READ_ONLY: no run is made, and the log says why once", async () => {
    const lines: string[] = [];
    const schedule = startReconcileSchedule({
      pool: h.db.pool,
      config: stripeConfig({ CONSOLE_READ_ONLY: "true" }),
      registry: new Registry(),
      log: (line) => lines.push(line),
    });
    await schedule.runOnce();
    await schedule.stop();
    const runs = await h.db.pool.query("SELECT count(*)::int AS n FROM reconciliation_runs");
    expect(runs.rows[0].n).toBe(0);
    expect(lines).toEqual([expect.stringContaining("CONSOLE_READ_ONLY=true")]);
  });
});
