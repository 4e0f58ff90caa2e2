import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import type { Principal } from "../../auth/auth-types";
import { Scope } from "../../auth/scope";
import { createPrismaClient, type PrismaClient } from "../../db/prisma";
import { findingsQuery } from "./contract";
import { changeFindingState, FindingStateRefusedError } from "./finding-state";
import { getFinding } from "./get-finding";
import { listFindings } from "./list-findings";
import { listReconciliationRuns } from "./list-reconciliation-runs";
import { RECON_SEED, seedReconciliation } from "./testing/seed-reconciliation";

const NOW = new Date();
const acme = Scope.ofPrincipal({ tenantId: "acme" });
const globex = Scope.ofPrincipal({ tenantId: "globex" });
const platform = Scope.ofPrincipal({ tenantId: null });
const operator = (tenantId: string | null): Principal =>
  ({ tokenId: null, actor: `op@${tenantId ?? "platform"}`, tenantId, role: "operator" }) as unknown as Principal;
const query = (raw: Record<string, string>) => findingsQuery.parse(raw);

describe("reconciliation read models", () => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrismaClient(db.pool);
    await seedReconciliation(db.pool, NOW);
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await db?.drop();
  });

  it("a tenant scope lists only its tenant's findings, whatever ?tenant= says; the platform sees all and the tenantless one", async () => {
    for (const asked of [{}, { tenant: "globex" }, { tenant: "initech" }] as Record<string, string>[]) {
      const list = await listFindings(acme, query(asked), db.pool);
      expect(list.tenant).toBe("acme");
      expect(list.findings).toHaveLength(RECON_SEED.perTenant);
      expect(list.findings.every((f) => f.tenant === "acme")).toBe(true);
      expect(JSON.stringify(list)).not.toMatch(/globex|initech|orphan/);
    }
    const all = await listFindings(platform, query({}), db.pool);
    expect(all.findings).toHaveLength(RECON_SEED.perTenant * 3 + 1);
    expect(all.findings.some((f) => f.tenant === null && f.providerObjectIds.includes(RECON_SEED.orphanObject))).toBe(true);
    const narrowed = await listFindings(platform, query({ tenant: "globex" }), db.pool);
    expect(narrowed.findings.map((f) => f.tenant)).toEqual(["globex", "globex", "globex"]);
  });

  it("filters by kind, provider, job type, state and time", async () => {
    const dup = await listFindings(platform, query({ kind: "duplicated_at_provider" }), db.pool);
    expect(dup.findings.map((f) => f.tenant).sort()).toEqual(["acme", "globex", "initech"]);
    expect((await listFindings(platform, query({ provider: "mailer" }), db.pool)).findings).toEqual([]);
    const refunds = await listFindings(acme, query({ jobType: "order.refund" }), db.pool);
    expect(refunds.findings.map((f) => f.kind)).toEqual(["drift"]);
    expect((await listFindings(platform, query({ state: "resolved" }), db.pool)).findings).toEqual([]);
    // Seeded last seen 5, 6, 7 … minutes ago: before 5.5 minutes ago leaves out the newest only.
    const older = await listFindings(platform, query({ to: new Date(NOW.getTime() - 5.5 * 60_000).toISOString() }), db.pool);
    expect(older.findings).toHaveLength(RECON_SEED.perTenant * 3);
    const newer = await listFindings(platform, query({ from: new Date(NOW.getTime() - 5.5 * 60_000).toISOString() }), db.pool);
    expect(newer.findings).toHaveLength(1);
  });

  it("keyset pagination walks every finding once, newest last seen first", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listFindings(platform, query({ limit: "4", ...(cursor ? { cursor } : {}) }), db.pool);
      seen.push(...page.findings.map((f) => f.id));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(RECON_SEED.perTenant * 3 + 1);
    const first = await listFindings(platform, query({ limit: "100" }), db.pool);
    expect(seen).toEqual(first.findings.map((f) => f.id));
    await expect(listFindings(platform, query({ cursor: "bm90LWEtY3Vyc29y" }), db.pool)).rejects.toThrow(/cursor/);
  });

  it("a finding's detail has both sides, its outcome redacted; another tenant's is not found", async () => {
    const [dup] = (await listFindings(acme, query({ kind: "duplicated_at_provider" }), db.pool)).findings;
    if (!dup) throw new Error("seed has no duplicate for acme");
    const detail = await getFinding(acme, dup.id, db.pool);
    expect(detail?.ours?.key).toBe(RECON_SEED.duplicateKey("acme"));
    expect(detail?.ours?.status).toBe("completed");
    expect(detail?.ours?.attempts).toBe(1);
    expect(detail?.ours?.providerKey).toContain("acme");
    expect(detail?.theirs.map((t) => t.id)).toEqual(RECON_SEED.duplicateObjects("acme"));
    expect(detail?.theirs[0]).toMatchObject({ amount: 4200, currency: "usd", status: "succeeded" });
    expect(detail?.theirs[0]?.created).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(JSON.stringify(detail)).not.toContain(RECON_SEED.outcomeSecret("acme"));
    expect(JSON.stringify(detail)).not.toContain("onceboard_tenant");
    expect(await getFinding(globex, dup.id, db.pool)).toBeNull();
    expect(await getFinding(platform, dup.id, db.pool)).not.toBeNull();
    const orphan = (await listFindings(platform, query({ kind: "unknown_to_onceboard" }), db.pool)).findings[0];
    expect(orphan && (await getFinding(acme, orphan.id, db.pool))).toBeNull();
  });

  it("runs: status for every scope; tallies, counts, requester and error text for the platform only", async () => {
    const forPlatform = await listReconciliationRuns(platform, { limit: 20, now: NOW }, db.pool);
    // Newest started first: the failed run was written last but started 30 minutes ago.
    expect(forPlatform.runs.map((r) => r.status)).toEqual(["running", "completed", "failed"]);
    const completed = forPlatform.runs[1];
    expect(completed?.counts).toMatchObject({ duplicated_at_provider: 3, unknown_to_onceboard: 1, pending: 0 });
    expect(completed?.durationSeconds).toBeCloseTo(120, 0);
    expect(forPlatform.runs[2]?.error).toContain("401");
    const forTenant = await listReconciliationRuns(acme, { limit: 20, now: NOW }, db.pool);
    // A run's tallies count every tenant's objects and effects: the platform's only.
    expect(forTenant.runs.map((r) => [r.objectsSeen, r.effectsSeen, r.matched])).toEqual(
      forPlatform.runs.map(() => [null, null, null]),
    );
    expect(forPlatform.runs.every((r) => typeof r.objectsSeen === "number")).toBe(true);
    expect(forTenant.runs.every((r) => r.counts === null && r.requestedBy === null)).toBe(true);
    expect(forTenant.runs[2]?.error).toBe("the run failed");
    const paged = await listReconciliationRuns(platform, { limit: 2, now: NOW }, db.pool);
    expect(paged.runs).toHaveLength(2);
    const rest = await listReconciliationRuns(platform, { limit: 2, cursor: paged.nextCursor ?? "", now: NOW }, db.pool);
    expect(rest.runs.map((r) => r.status)).toEqual(["failed"]);
    expect(rest.nextCursor).toBeNull();
  });

  it("acknowledge and resolve change the state with their audit row; refusals are audited and leave the row alone", async () => {
    const [drift] = (await listFindings(globex, query({ kind: "drift" }), db.pool)).findings;
    if (!drift) throw new Error("seed has no drift for globex");
    const input = { principal: operator("globex"), scope: globex, id: drift.id, ip: "127.0.0.1" };
    await expect(
      changeFindingState({ ...input, principal: operator("acme"), scope: acme, action: "acknowledge", note: "mine?" }, prisma),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    const acked = await changeFindingState({ ...input, action: "acknowledge", note: "refund amount under review" }, prisma);
    expect(acked.finding).toMatchObject({
      state: "acknowledged",
      stateNote: "refund amount under review",
      stateChangedBy: "op@globex",
    });
    await expect(changeFindingState({ ...input, action: "acknowledge", note: "again" }, prisma)).rejects.toBeInstanceOf(
      FindingStateRefusedError,
    );
    expect((await listFindings(globex, query({}), db.pool)).findings.map((f) => f.id)).not.toContain(drift.id);
    expect((await listFindings(globex, query({ state: "acknowledged" }), db.pool)).findings.map((f) => f.id)).toEqual([drift.id]);
    await changeFindingState({ ...input, action: "resolve", note: "refunded by hand" }, prisma);
    await expect(changeFindingState({ ...input, action: "acknowledge", note: "late" }, prisma)).rejects.toMatchObject({
      code: "CONFLICT",
    });
    expect((await getFinding(globex, drift.id, db.pool))?.stateNote).toBe("refunded by hand");
    const rows = await prisma.auditLog.findMany({
      where: { target: drift.id, action: { startsWith: "reconciliation.finding." } },
      orderBy: { id: "asc" },
    });
    expect(rows.map((r) => [r.action, r.result, r.tenantId])).toEqual([
      ["reconciliation.finding.acknowledge", "not_found", "acme"],
      ["reconciliation.finding.acknowledge", "ok", "globex"],
      ["reconciliation.finding.acknowledge", "conflict", "globex"],
      ["reconciliation.finding.resolve", "ok", "globex"],
      ["reconciliation.finding.acknowledge", "conflict", "globex"],
    ]);
  });
});
