import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Scope } from "../lib/auth/scope";
import { effectSearchQuery } from "../lib/features/keys-and-effects/contract";
import { getEffect } from "../lib/features/keys-and-effects/get-effect";
import { searchEffects } from "../lib/features/keys-and-effects/search-effects";
import { overviewQuery } from "../lib/features/overview/contract";
import { getOverviewSeries } from "../lib/features/overview/get-overview-series";
import { findingsQuery } from "../lib/features/reconciliation/contract";
import { getFinding } from "../lib/features/reconciliation/get-finding";
import { listFindings } from "../lib/features/reconciliation/list-findings";
import { getRetentionAdvice } from "../lib/features/retention-and-gaps/advise-retention";
import { violationsQuery } from "../lib/features/violations/contract";
import { listViolations } from "../lib/features/violations/list-violations";
import { demoSystem } from "./demo-system";
import type { KnownSystem, RunningSystem } from "./known-system";
import { secondSystem } from "./second-system/system";

/**
 * The console tells the truth about a workload it did not write itself. Each system writes a known
 * workload through the library's public API (redeliveries, a crash and its takeover, an uncaught
 * unique violation) and plants disagreements at its provider (a double charge, a missing payment,
 * an orphan payment, a drift); then `npm run reconcile`, configured by nothing but the system's
 * providers file, must find exactly what was planted, and the console's read models must report
 * exactly the workload, each tenant seeing only its own. The same checks run on the demo's shape
 * and on the second system (test/second-system/), written from the docs alone.
 */
const ROOT = path.resolve(import.meta.dirname, "..");
const platform = Scope.ofPrincipal({ tenantId: null });
const tenant = (name: string) => Scope.ofPrincipal({ tenantId: name });
const sortRows = <T>(rows: T[]) => rows.sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));

describe("the second system shares no code with the demo", () => {
  it("imports nothing of lib/demo, lib/soak or the demo-shaped test kits", () => {
    const dir = path.join(ROOT, "test/second-system");
    for (const file of fs.readdirSync(dir)) {
      const text = fs.readFileSync(path.join(dir, file), "utf8");
      expect(text, file).not.toMatch(/lib\/demo|lib\/soak|reconciliation\/testing|demo-system/);
    }
  });
});

describe.each([secondSystem, demoSystem])("the console's truth about $name", (system: KnownSystem) => {
  let running: RunningSystem;
  const started = new Date(Date.now() - 60_000);
  const saved: Record<string, string | undefined> = {};

  const reconcileCli = (...args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const proc = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "scripts/reconcile.ts"), ...args], {
        env: { ...process.env, DATABASE_URL: running.db.url, ...running.env },
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

  beforeAll(async () => {
    running = await system.start();
    // The console's own reads (the Keys page's provider verdict, the retention advice) find the
    // providers the way the console does: through the environment's providers file.
    for (const [name, value] of Object.entries(running.env)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
  }, 120_000);
  afterAll(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await running?.close();
  });

  it("npm run reconcile, configured by the providers file alone, finds exactly what was planted; a rerun adds nothing", async () => {
    const { planted, db } = running;
    const window = ["--from", started.toISOString(), "--to", new Date(Date.now() + 60_000).toISOString(), "--grace-seconds", "0"];
    const run = await reconcileCli("--provider", running.provider, ...window);
    expect(run.code, run.stderr).toBe(0);
    const count = (kind: string) => planted.findings.filter((f) => f[0] === kind).length;
    const summary = `reconcile matched=${planted.matched} duplicated_at_provider=${count("duplicated_at_provider")} missing_at_provider=${count("missing_at_provider")} unknown_to_onceboard=${count("unknown_to_onceboard")} drift=${count("drift")} pending=0`;
    expect(run.stdout.trim().split("\n").at(-1)).toBe(summary);
    const { rows } = await db.pool.query<{ kind: string; tenant_id: string; effect_key: string }>(
      "SELECT kind, tenant_id, effect_key FROM reconciliation_findings ORDER BY kind, tenant_id, effect_key",
    );
    expect(rows.map((r) => [r.kind, r.tenant_id, r.effect_key])).toEqual(planted.findings);
    const { rows: runs } = await db.pool.query(
      "SELECT effects_seen, matched FROM reconciliation_runs WHERE status = 'completed'",
    );
    // Only the provider's job types and steps are compared.
    expect(runs).toEqual([{ effects_seen: planted.effectsSeen, matched: planted.matched }]);
    const again = await reconcileCli("--provider", running.provider, ...window);
    expect(again.stdout.trim().split("\n").at(-1)).toBe(summary);
    const { rows: after } = await db.pool.query("SELECT count(*)::int AS n FROM reconciliation_findings");
    expect(after[0].n).toBe(planted.findings.length);
  }, 120_000);

  it("each tenant reads exactly its own findings, and no other tenant's finding by id; the platform all", async () => {
    const { planted, db } = running;
    const found = async (scope: Scope) =>
      sortRows(
        (await listFindings(scope, findingsQuery.parse({}), db.pool)).findings.map((f) => [f.kind, f.tenant, f.effectKey]),
      );
    expect(await found(platform)).toEqual(planted.findings);
    for (const name of system.tenants) {
      expect(await found(tenant(name))).toEqual(planted.findings.filter((f) => f[1] === name));
      const others = (await listFindings(platform, findingsQuery.parse({}), db.pool)).findings.filter((f) => f.tenant !== name);
      for (const other of others) expect(await getFinding(tenant(name), other.id, db.pool), other.id).toBeNull();
    }
  });

  it("the Keys page's provider verdict names the provider's own objects, for the tenant whose key it is", async () => {
    for (const [name, key, tone, text] of running.planted.verdicts) {
      const effect = await getEffect(tenant(name), { key }, running.db.pool);
      expect(effect, `${name} ${key}`).not.toBeNull();
      if (tone === null) {
        expect(effect?.providerSide, key).toBeNull();
        continue;
      }
      expect(effect?.providerSide?.tone, key).toBe(tone);
      expect(effect?.providerSide?.text, key).toMatch(text as RegExp);
      // Another tenant asking for the same key: not found, as if it did not exist.
      for (const other of system.tenants.filter((t) => t !== name))
        expect(await getEffect(tenant(other), { key }, running.db.pool)).toBeNull();
    }
  });

  it("keys, violations and the Overview's job types are exactly the workload's, per tenant", async () => {
    const { planted, db } = running;
    for (const name of system.tenants) {
      const found = await searchEffects(tenant(name), effectSearchQuery.parse({ limit: "100" }), db.pool);
      expect(found.effects.map((e) => e.key).sort()).toEqual(planted.keys[name]);
      const violations = await listViolations(tenant(name), violationsQuery.parse({}), db.pool);
      expect(violations.violations.map((v) => [v.tenant, v.key, v.constraint])).toEqual(
        planted.violations.filter((v) => v[0] === name),
      );
    }
    const overview = await getOverviewSeries(platform, overviewQuery.parse({ window: "1h" }), { db: db.pool });
    expect(
      Object.fromEntries(
        overview.jobTypes.map((j) => [
          j.jobType,
          {
            deliveries: j.deliveries,
            claims: j.claims,
            suppressions: j.suppressions,
            redeliveries: j.redeliveries,
            uncaughtViolations: j.uncaughtViolations,
          },
        ]),
      ),
    ).toEqual(planted.activity);
    expect(overview.totals.uncaughtViolations).toBe(planted.violations.length);
  });

  it("the retention advice weighs the configured providers' key windows against the system's own job types only", async () => {
    const advice = await getRetentionAdvice(running.db.pool);
    expect(advice.providers.map((p) => [p.provider, p.keyWindowSeconds])).toEqual(running.planted.keyWindows);
    const ownJobTypes = Object.keys(running.planted.activity);
    for (const p of advice.providers) for (const jobType of p.jobTypes) expect(ownJobTypes).toContain(jobType);
    expect(JSON.stringify(advice)).not.toMatch(system.foreignJobTypes);
  });
});
