import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Scope } from "../../lib/auth/scope";
import { getEffect } from "../../lib/console/get-effect";
import { getFinding } from "../../lib/console/get-finding";
import { getOverviewSeries } from "../../lib/console/get-overview-series";
import { listFindings } from "../../lib/console/list-findings";
import { listViolations } from "../../lib/console/list-violations";
import { searchEffects } from "../../lib/console/search-effects";
import { effectSearchQuery } from "../../lib/contract/effects";
import { overviewQuery } from "../../lib/contract/overview";
import { findingsQuery } from "../../lib/contract/reconciliation";
import { violationsQuery } from "../../lib/contract/violations";
import { getRetentionAdvice } from "../../lib/retention/advise-retention";
import { createTestDatabase, type TestDatabase } from "../database";
import { type Payco, startPayco } from "./payco";
import { JOB_TYPES, type Planted, secondSystemProvidersFile, TENANTS, writeKnownWorkload } from "./workload";

/**
 * The second system (test/second-system/workload.ts: tenants northwind and umbrella, job types
 * invoice.settle, subscription.renew and shipment.label, keys like settle:INV-000123/v1, its own
 * provider PayCo and its own providers file) through the library's public API, then reconciled by
 * `npm run reconcile` with nothing but that file, then read back through the console's read models
 * as each tenant and the platform. Every number and finding must be exactly what was written.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
let db: TestDatabase;
let payco: Payco;
let planted: Planted;
let providersFile: string;
let dir: string;
const started = new Date(Date.now() - 60_000);
const saved = { file: process.env.ONCEBOARD_PROVIDERS_FILE, token: process.env.PAYCO_TOKEN };

const platform = Scope.ofPrincipal({ tenantId: null });
const tenant = (name: string) => Scope.ofPrincipal({ tenantId: name });

function reconcileCli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "scripts/reconcile.ts"), ...args], {
      env: { ...process.env, DATABASE_URL: db.url, ONCEBOARD_PROVIDERS_FILE: providersFile, PAYCO_TOKEN: payco.token },
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

beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 6 });
  payco = await startPayco();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-second-system-"));
  providersFile = path.join(dir, "providers.json");
  fs.writeFileSync(providersFile, JSON.stringify(secondSystemProvidersFile(payco), null, 2));
  planted = await writeKnownWorkload(db.pool, payco);
  // The console's reads (the Keys page's provider verdict, the retention advice) find PayCo the
  // way the console does: through the providers file its environment names.
  process.env.ONCEBOARD_PROVIDERS_FILE = providersFile;
  process.env.PAYCO_TOKEN = payco.token;
}, 120_000);

afterAll(async () => {
  for (const [name, value] of [
    ["ONCEBOARD_PROVIDERS_FILE", saved.file],
    ["PAYCO_TOKEN", saved.token],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  await payco?.close();
  await db?.drop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("the second system, written from the docs alone", () => {
  it("shares no code with the demo", () => {
    for (const file of fs.readdirSync(import.meta.dirname)) {
      const text = fs.readFileSync(path.join(import.meta.dirname, file), "utf8");
      expect(text, file).not.toMatch(/lib\/demo|lib\/soak|reconciliation\/testing/);
    }
  });

  it("is reconciled by npm run reconcile through its providers file: exactly the planted findings", async () => {
    const window = ["--from", started.toISOString(), "--to", new Date(Date.now() + 60_000).toISOString(), "--grace-seconds", "0"];
    const run = await reconcileCli("--provider", "payco", ...window);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim().split("\n").at(-1)).toBe(
      `reconcile matched=${planted.matched} duplicated_at_provider=1 missing_at_provider=1 unknown_to_onceboard=1 drift=1 pending=0`,
    );
    const { rows } = await db.pool.query<{ kind: string; tenant_id: string; effect_key: string }>(
      "SELECT kind, tenant_id, effect_key FROM reconciliation_findings ORDER BY kind, tenant_id, effect_key",
    );
    expect(rows.map((r) => [r.kind, r.tenant_id, r.effect_key])).toEqual(planted.findings);
    const { rows: runs } = await db.pool.query<{ effects_seen: number; matched: number }>(
      "SELECT effects_seen, matched FROM reconciliation_runs WHERE status = 'completed'",
    );
    // shipment.label is not PayCo's: its effects are not compared.
    expect(runs).toEqual([{ effects_seen: planted.effectsSeen, matched: planted.matched }]);
    // Rerun: the same findings, none added.
    const again = await reconcileCli("--provider", "payco", ...window);
    expect(again.stdout.trim().split("\n").at(-1)).toBe(run.stdout.trim().split("\n").at(-1));
    const { rows: after } = await db.pool.query("SELECT count(*)::int AS n FROM reconciliation_findings");
    expect(after[0].n).toBe(planted.findings.length);
  }, 120_000);

  it("each tenant reads exactly its own findings; the platform all of them", async () => {
    const kinds = async (scope: Scope) =>
      (await listFindings(scope, findingsQuery.parse({}), db.pool)).findings
        .map((f) => [f.kind, f.tenant, f.effectKey])
        .sort((x, y) => String(x).localeCompare(String(y)));
    expect(await kinds(platform)).toEqual(planted.findings);
    for (const name of TENANTS) expect(await kinds(tenant(name))).toEqual(planted.findings.filter((f) => f[1] === name));
    const drift = (await listFindings(tenant("umbrella"), findingsQuery.parse({ kind: "drift" }), db.pool)).findings[0]!;
    const detail = await getFinding(tenant("umbrella"), drift.id, db.pool);
    expect(detail?.detail).toBe("settle:INV-000203/v1: amount 5000 here, 5100 at the provider");
    expect(await getFinding(tenant("northwind"), drift.id, db.pool)).toBeNull();
  });

  it("the Keys page's verdict names PayCo's own objects, for the tenant whose key it is", async () => {
    const side = async (name: string, key: string) => (await getEffect(tenant(name), { key }, db.pool))?.providerSide;
    const double = await side("northwind", "settle:INV-000104/v1");
    expect(double).toMatchObject({ provider: "payco", label: "PayCo", tone: "danger" });
    expect(double?.text).toMatch(/^ran once here · 2 charges at PayCo · reconciled/);
    expect(await side("northwind", "renew-charge:SUB-0042/2026-12")).toMatchObject({ tone: "ok" });
    expect((await side("northwind", "renew-charge:SUB-0042/2026-12"))?.text).toMatch(
      /^ran once here · 1 renewal charge at PayCo \(ch_/,
    );
    expect((await side("northwind", "settle:INV-000103/v1"))?.text).toMatch(
      /^completed here on attempt 2 · 1 charge at PayCo \(ch_/,
    );
    expect((await side("umbrella", "settle:INV-000202/v1"))?.text).toMatch(/^ran once here · no charge at PayCo/);
    // Not PayCo's: no provider side. Another tenant's key: not found at all.
    expect(await side("umbrella", "label:SHP-8001")).toBeNull();
    expect(await getEffect(tenant("umbrella"), { key: "settle:INV-000104/v1" }, db.pool)).toBeNull();
  });

  it("keys, violations and the Overview's job types are exactly the workload's, per tenant", async () => {
    for (const name of TENANTS) {
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

  it("the retention advice weighs PayCo's key window against its own job types, and names no demo job type", async () => {
    const advice = await getRetentionAdvice(db.pool);
    expect(advice.providers.map((p) => [p.provider, p.keyWindowSeconds])).toEqual([["payco", 48 * 3600]]);
    expect(advice.providers[0]?.jobTypes.every((j) => j === JOB_TYPES.settle || j === JOB_TYPES.renew)).toBe(true);
    expect(JSON.stringify(advice)).not.toMatch(/order\.(paid|capture|refund|receipt)/);
  });
});
