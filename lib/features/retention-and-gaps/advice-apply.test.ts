import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, idleErrorListeners, oneConnectionPool, type TestDatabase } from "../../../test/database";
import type { PrismaClient } from "../../db/generated/client";
import { ensureEffectPartitions } from "../../db/partitions";
import { consolePoolConfig } from "../../db/pool";
import { createPrismaClient } from "../../db/prisma";
import { DEFAULT_SCHEMA } from "../../idempotency";
import { registerWorker } from "../../idempotency/worker-registry";
import { applyAdvice, previewAdvice } from "./advice-apply";
import { getRetentionSettings } from "./get-retention";
import type { RetentionAudit } from "./settings";
import { GAPS_SEED_DAYS_BACK, GAPS_SEED_EXPECTED, seedGaps } from "./testing/seed-gaps";

let db: TestDatabase;
let prisma: PrismaClient;
const now = new Date();
const audit: RetentionAudit = (tx, entry) =>
  tx.auditLog
    .create({ data: { actor: "test", action: entry.action, target: entry.target, result: entry.result, detail: entry.detail } })
    .then(() => {});

beforeAll(async () => {
  db = await createTestDatabase();
  prisma = createPrismaClient(db.pool);
  await ensureEffectPartitions(db.pool, { back: GAPS_SEED_DAYS_BACK + 1, ahead: 1 });
  await seedGaps(db.pool, now);
});
afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});
beforeEach(async () => {
  await db.pool.query("UPDATE retention_settings SET retention_days = 7, max_retry_window_days = 3 WHERE id = 1");
});

const deps = () => ({ db: db.pool, pool: db.pool, prisma, now });
const author = () => ({ ...deps(), actor: "admin@test", audit });
const settings = async () => {
  const s = await getRetentionSettings(prisma);
  return { retentionDays: s.retentionDays, maxRetryWindowDays: s.maxRetryWindowDays };
};

describe("applying the retention advice", () => {
  it("previews the change before and after and the partitions it keeps, without changing anything", async () => {
    const preview = await previewAdvice({}, deps());
    expect(preview.change).toEqual({
      before: { retentionDays: 7, maxRetryWindowDays: 3 },
      after: { retentionDays: GAPS_SEED_EXPECTED.recommendedDays, maxRetryWindowDays: 3 },
    });
    expect(preview.blockers).toEqual([]);
    expect(preview.refusal).toBeNull();
    // Today partitions older than 7 d are dropped; with 23 d they are kept: the plan says which.
    expect(preview.plan?.keepSeconds).toBe(GAPS_SEED_EXPECTED.recommendedDays * 86_400);
    expect(preview.partitionChanges.length).toBeGreaterThan(0);
    for (const p of preview.partitionChanges) expect([p.now, p.after]).toEqual(["drop", "keep"]);
    // The what-if plan was rolled back.
    expect(await settings()).toEqual({ retentionDays: 7, maxRetryWindowDays: 3 });
  });

  it("gives its what-if connection back to the pool with no listener of its own left on it", async () => {
    // One connection, so every preview takes the same one.
    const pool = oneConnectionPool(db.url, "advice-listeners");
    try {
      const before = await idleErrorListeners(pool);
      for (let preview = 0; preview < 3; preview++) await previewAdvice({}, { ...deps(), pool });
      expect(await idleErrorListeners(pool)).toBe(before);
    } finally {
      await pool.end();
    }
  });

  it("applies the confirmed change, audited with what the advice said; a second confirm of the same preview is stale", async () => {
    const body = { retentionDays: GAPS_SEED_EXPECTED.recommendedDays, expect: { retentionDays: 7, maxRetryWindowDays: 3 } };
    const applied = await applyAdvice(body, {}, author());
    expect(applied.settings).toMatchObject({ retentionDays: GAPS_SEED_EXPECTED.recommendedDays, updatedBy: "admin@test" });
    const { rows } = await db.pool.query<{ result: string; detail: Record<string, unknown> }>(
      "SELECT result, detail FROM audit_log WHERE action = 'retention.advice.apply' ORDER BY id DESC LIMIT 1",
    );
    expect(rows[0]).toMatchObject({
      result: "ok",
      detail: {
        before: { retentionDays: 7 },
        after: { retentionDays: GAPS_SEED_EXPECTED.recommendedDays },
        advice: { recommendedSeconds: GAPS_SEED_EXPECTED.recommendedDays * 86_400, basis: "p99.9" },
      },
    });
    await expect(applyAdvice(body, {}, author())).rejects.toMatchObject({
      code: "RETENTION_STALE",
      message: expect.stringMatching(/settings changed since this change was reviewed/),
    });
    expect((await settings()).retentionDays).toBe(GAPS_SEED_EXPECTED.recommendedDays);
  });

  it("refuses a confirm whose retention is not the advice's any more", async () => {
    await expect(
      applyAdvice({ retentionDays: 40, expect: { retentionDays: 7, maxRetryWindowDays: 3 } }, {}, author()),
    ).rejects.toMatchObject({
      code: "RETENTION_STALE",
      message: `the advice changed since the preview: it now recommends ${GAPS_SEED_EXPECTED.recommendedDays} d, not 40 d; review it again`,
    });
    expect(await settings()).toEqual({ retentionDays: 7, maxRetryWindowDays: 3 });
  });

  it("lowers the retention to the advice, and the preview lists the partitions it would drop", async () => {
    // send-receipt's gaps end within a day: the advice is the 3 d retry window, below today's 7 d.
    const options = { jobType: "send-receipt" };
    const preview = await previewAdvice(options, deps());
    expect(preview.change).toEqual({
      before: { retentionDays: 7, maxRetryWindowDays: 3 },
      after: { retentionDays: 3, maxRetryWindowDays: 3 },
    });
    expect(preview.partitionChanges.length).toBeGreaterThan(0);
    for (const p of preview.partitionChanges) expect([p.now, p.after]).toEqual(["keep", "drop"]);
    const applied = await applyAdvice(
      { retentionDays: 3, expect: { retentionDays: 7, maxRetryWindowDays: 3 } },
      options,
      author(),
    );
    expect(applied.settings.retentionDays).toBe(3);
  });

  it("counts a live worker's window in the advice, so the advice never goes below it", async () => {
    await db.pool.query("UPDATE retention_settings SET retention_days = 30, max_retry_window_days = 1 WHERE id = 1");
    const worker = registerWorker(db.pool, { workerId: "w-25d", maxRetryWindowMs: 25 * 86_400_000 });
    await worker.ready;
    try {
      const preview = await previewAdvice({}, deps());
      expect(preview.change?.after.retentionDays).toBe(25);
      expect(preview).toMatchObject({ blockers: [], refusal: null });
    } finally {
      await worker.stop();
    }
  });

  it("has nothing to apply when the advisor refuses", async () => {
    const preview = await previewAdvice({ minSamples: 1_000_000 }, deps());
    expect(preview).toMatchObject({ change: null, plan: null, blockers: [], advice: { status: "refused" } });
    await expect(
      applyAdvice(
        { retentionDays: 23, expect: { retentionDays: 7, maxRetryWindowDays: 3 } },
        { minSamples: 1_000_000 },
        author(),
      ),
    ).rejects.toMatchObject({ code: "RETENTION_STALE" });
  });
});
