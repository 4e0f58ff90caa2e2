import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { appendAudit } from "../auth/audit";
import { Scope } from "../auth/scope";
import { ensureEffectPartitions } from "../db/partitions";
import { createPrismaClient, type PrismaClient } from "../db/prisma";
import { listAudit } from "../features/audit/list-audit";
import { getEffect } from "../features/keys-and-effects/get-effect";
import { searchEffects } from "../features/keys-and-effects/search-effects";
import { KEYS_SEED, seedKeys } from "../features/keys-and-effects/testing/seed-keys";
import { overviewQuery } from "../features/overview/contract";
import { getOverviewSeries } from "../features/overview/get-overview-series";
import { PostgresSource } from "../features/overview/metrics/postgres-source";
import { seedOverview } from "../features/overview/testing/seed-overview";
import { parseGapsQuery } from "../features/retention-and-gaps/gaps-query";
import { getGaps } from "../features/retention-and-gaps/get-gaps";
import { getRetention, getRetentionPlan } from "../features/retention-and-gaps/get-retention";
import { GAPS_SEED_DAYS_BACK, seedGaps } from "../features/retention-and-gaps/testing/seed-gaps";
import { listViolations } from "../features/violations/list-violations";

/**
 * Every read model that reads tenant data, with a tenant scope that asks (through the query, as a
 * URL would) for another tenant: the answer is its own tenant's, and no other tenant's name, keys
 * or secrets appear anywhere in it. Each also runs with a platform scope, which does see the other
 * tenants: proof that the seed holds what the tenant answer must leave out.
 */
const NOW = new Date();
const OTHERS = /globex|initech|GLOBEX|order-90\d|order-7[78]\b/;
const acme = Scope.ofPrincipal({ tenantId: "acme" });
const platform = Scope.ofPrincipal({ tenantId: null });
const text = (value: unknown) => JSON.stringify(value);

describe("a tenant scope never reads another tenant's rows", () => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrismaClient(db.pool);
    await ensureEffectPartitions(db.pool, { now: NOW, back: GAPS_SEED_DAYS_BACK + 1, ahead: 1 });
    await seedOverview(db.pool, NOW);
    await seedKeys(db.pool, NOW);
    await seedGaps(db.pool, NOW);
    // A stuck claim (lease expired) and an uncaught violation in each tenant, with its key and owner:
    // what the Overview's HTML leaked.
    for (const tenantId of ["acme", "globex", "initech"])
      await db.pool.query(
        `INSERT INTO uncaught_violation_keys (occurred_at, tenant_id, job_type, constraint_name, key, message_id)
         VALUES (now() - interval '10 minutes', $1, 'mark-paid', 'ledger_order_id_key', $2, $3)`,
        [tenantId, `mark-paid:${tenantId}-order`, `msg-${tenantId}`],
      );
    for (const tenantId of ["acme", "globex", "initech"])
      await db.pool.query(
        `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until, created_at)
         VALUES ($1, $2, 'capture-payment', 'in_progress', 'external', 1, $3, now() - interval '5 minutes', now() - interval '1 hour')`,
        [tenantId, `stuck:${tenantId}-order`, `worker-of-${tenantId}`],
      );
    for (const tenantId of ["acme", "globex", "initech"])
      await appendAudit(prisma, { principal: null, action: "effect.read", tenantId, target: `k-${tenantId}`, result: "ok" });
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await db?.drop();
  });

  // What the Overview page prefetches into its HTML: the session's scope and the URL's query.
  const overview = (scope: Scope, raw: Record<string, string>) =>
    getOverviewSeries(scope, overviewQuery.parse(raw), { db: db.pool, source: new PostgresSource(db.pool), now: NOW });

  it("Overview: tenants, stuck claims and violation keys are the scope's, whatever ?tenant= says", async () => {
    const asked: Record<string, string>[] = [
      { window: "7d" },
      { window: "7d", tenant: "globex" },
      { window: "7d", tenant: "initech" },
    ];
    for (const raw of asked) {
      const answer = await overview(acme, raw);
      expect(answer.tenant).toBe("acme");
      expect(answer.topTenants.map((t) => t.tenant)).toEqual(["acme"]);
      expect(answer.stuck.length).toBeGreaterThan(0);
      expect(answer.stuck.every((c) => c.tenant === "acme")).toBe(true);
      expect(answer.violationGroups.length).toBeGreaterThan(0);
      expect(answer.violationGroups.every((g) => g.tenant === "acme")).toBe(true);
      expect(text(answer)).not.toMatch(OTHERS);
    }
    const everyone = await overview(platform, { window: "7d" });
    expect(everyone.topTenants.map((t) => t.tenant).sort()).toEqual(["acme", "globex", "initech"]);
    expect(everyone.stuck.map((c) => c.tenant)).toEqual(expect.arrayContaining(["acme", "globex", "initech"]));
    expect((await overview(platform, { window: "7d", tenant: "globex" })).tenant).toBe("globex");
  });

  it("Delivery gaps: late effects and tenants are the scope's", async () => {
    for (const query of ["?range=30d", "?range=30d&tenant=globex"]) {
      const gaps = await getGaps(acme, parseGapsQuery(query, NOW), db.pool);
      expect(gaps.tenant).toBe("acme");
      expect(text(gaps)).not.toMatch(OTHERS);
    }
    expect(text(await getGaps(platform, parseGapsQuery("?range=30d", NOW), db.pool))).toMatch(/globex/);
  });

  it("Keys: search and detail read the scope's tenant; another tenant's key is a missing one", async () => {
    const found = await searchEffects(acme, { tenant: "globex", q: KEYS_SEED.orderId, limit: 50, now: NOW }, db.pool);
    expect(found.tenant).toBe("acme");
    expect(found.effects.length).toBeGreaterThan(0);
    const capture = await getEffect(acme, { tenant: "globex", key: `capture:${KEYS_SEED.orderId}`, now: NOW }, db.pool);
    expect(capture?.tenant).toBe("acme");
    expect(text([found, capture])).not.toMatch(OTHERS);
    expect(await getEffect(acme, { key: "capture:order-901", now: NOW }, db.pool)).toBeNull();
    expect(await getEffect(platform, { tenant: "globex", key: "capture:order-901", now: NOW }, db.pool)).not.toBeNull();
    // A platform scope naming no tenant searches every tenant, each row naming its own.
    const everyTenant = await searchEffects(platform, { q: KEYS_SEED.orderId, limit: 200, now: NOW }, db.pool);
    expect(everyTenant.tenant).toBeNull();
    expect(everyTenant.effects.every((e) => e.key.includes(KEYS_SEED.orderId))).toBe(true);
    expect(found.effects.every((e) => e.tenant === "acme")).toBe(true);
  });

  it("Violations: a tenant scope lists its own violations only", async () => {
    const own = await listViolations(acme, { tenant: "globex", limit: 100, now: NOW }, db.pool);
    expect(own.tenant).toBe("acme");
    expect(own.violations.length).toBeGreaterThan(0);
    expect(own.violations.every((v) => v.tenant === "acme")).toBe(true);
    expect(text(own)).not.toMatch(OTHERS);
    const all = await listViolations(platform, { limit: 100, now: NOW }, db.pool);
    expect(new Set(all.violations.map((v) => v.tenant))).toEqual(new Set(["acme", "globex", "initech"]));
  });

  it("Audit: a tenant scope lists its own rows only", async () => {
    const own = await listAudit(acme, { tenant: "globex", limit: 50 }, prisma);
    expect(own.entries.map((e) => e.tenantId)).toEqual(["acme"]);
    const all = await listAudit(platform, { limit: 50 }, prisma);
    expect(all.entries.map((e) => e.tenantId).sort()).toEqual(["acme", "globex", "initech"]);
  });

  it("Retention: a tenant gets the settings and its own largest gap, not the partitions or the plan", async () => {
    const initech = Scope.ofPrincipal({ tenantId: "initech" });
    const view = await getRetention(initech, { pool: db.pool, prisma });
    expect(view).toMatchObject({ plan: null, liveWorkers: [], runs: [] });
    const { rows } = await db.pool.query<{ mine: number; all: number }>(
      "SELECT max(max_gap_seconds) FILTER (WHERE tenant_id = 'initech')::float8 AS mine, max(max_gap_seconds)::float8 AS all FROM effects",
    );
    expect(rows[0]!.mine).not.toBe(rows[0]!.all);
    expect(view.observedMaxGapSeconds).toBe(rows[0]!.mine);
    expect((await getRetention(platform, { pool: db.pool, prisma })).observedMaxGapSeconds).toBe(rows[0]!.all);
    await expect(getRetentionPlan(initech, { pool: db.pool })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect((await getRetentionPlan(platform, { pool: db.pool })).partitions.length).toBeGreaterThan(0);
  });
});
