import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import type { Principal } from "../../auth/auth-types";
import { loadConfig } from "../../config";
import { ensureEffectPartitions } from "../../db/partitions";
import { createPrismaClient, type PrismaClient } from "../../db/prisma";
import type { ProviderAdapter, ProviderPage } from "../../reconciliation/adapter";
import { writeStripeProvidersFile } from "../../reconciliation/testing/harness";
import { startReconciliation } from "./start-reconciliation";

/**
 * Starting a run from the API: the answer is the run's row while the run goes on; a second start
 * of the same window while the first holds its lock is refused (409) and writes nothing; an
 * unknown or unconfigured provider is refused before anything runs; each attempt is audited.
 */
const admin = { tokenId: null, actor: "platform admin (…abc)", tenantId: null, role: "admin" } as unknown as Principal;

/** An adapter whose one (empty) page is held until `release()`: a run that stays running. */
function heldAdapter(): { adapter: ProviderAdapter; release: () => void; asked: () => number } {
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let asked = 0;
  return {
    adapter: {
      provider: "stripe",
      async listPage(): Promise<ProviderPage> {
        asked++;
        await held;
        return { objects: [], next: null };
      },
    },
    release: () => release(),
    asked: () => asked,
  };
}

describe("startReconciliation", () => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  const window = { from: new Date(Date.now() - 3_600_000), to: new Date(Date.now() - 600_000) };
  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrismaClient(db.pool);
    await ensureEffectPartitions(db.pool, { back: 1, ahead: 1 });
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await db?.drop();
  });
  const providersFile = writeStripeProvidersFile();
  const config = () => ({
    ...loadConfig(),
    DATABASE_URL: db.url,
    STRIPE_API_KEY: "sk_test_start",
    ONCEBOARD_PROVIDERS_FILE: providersFile,
  });

  it("answers with the running run; a second start of the window is refused while the first holds the lock", async () => {
    const first = heldAdapter();
    const run = await startReconciliation(
      { principal: admin, provider: "stripe", ...window, ip: "127.0.0.1" },
      { config: config(), prisma, adapter: () => first.adapter },
    );
    expect(run).toMatchObject({ provider: "stripe", status: "running", trigger: "api", requestedBy: admin.actor });
    expect(run.windowFrom).toBe(window.from.toISOString());

    const second = heldAdapter();
    await expect(
      startReconciliation(
        { principal: admin, provider: "stripe", ...window, ip: "127.0.0.1" },
        { config: config(), prisma, adapter: () => second.adapter },
      ),
    ).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringContaining("already running") });
    expect(second.asked()).toBe(0);

    first.release();
    await expect
      .poll(async () => (await db.pool.query("SELECT status FROM reconciliation_runs WHERE id = $1", [run.id])).rows[0]?.status, {
        timeout: 30_000,
      })
      .toBe("completed");
    const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM reconciliation_runs");
    expect(rows[0].n).toBe(1);
  });

  it("refuses an unknown or unconfigured provider before anything runs", async () => {
    const input = { principal: admin, ...window, ip: null };
    await expect(startReconciliation({ ...input, provider: "paypal" }, { config: config(), prisma })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(
      startReconciliation({ ...input, provider: "stripe" }, { config: { ...config(), STRIPE_API_KEY: undefined }, prisma }),
    ).rejects.toMatchObject({ code: "CONFLICT", message: expect.stringContaining("STRIPE_API_KEY") });
    const audit = await db.pool.query<{ result: string }>(
      "SELECT result FROM audit_log WHERE action = 'reconciliation.run' ORDER BY id",
    );
    expect(audit.rows.map((r) => r.result)).toEqual(["ok", "busy", "not_found", "not_configured"]);
  });
});
