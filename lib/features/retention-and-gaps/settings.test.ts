import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { Scope } from "../../auth/scope";
import type { PrismaClient } from "../../db/generated/client";
import { createPrismaClient } from "../../db/prisma";
import { registerWorker } from "../../idempotency/worker-registry";
import { applyRetention } from "./apply";
import { getRetention } from "./get-retention";
import { type RetentionAudit, updateRetentionSettings } from "./settings";

let db: TestDatabase;
let prisma: PrismaClient;
const audit: RetentionAudit = (tx, entry) =>
  tx.auditLog
    .create({ data: { actor: "test", action: entry.action, target: entry.target, result: entry.result, detail: entry.detail } })
    .then(() => {});

beforeAll(async () => {
  db = await createTestDatabase();
  prisma = createPrismaClient(db.pool);
});
afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

const auditRows = () =>
  db.pool.query<{ result: string; detail: Record<string, unknown> }>(
    "SELECT result, detail FROM audit_log WHERE action = 'retention.settings' ORDER BY id",
  );

describe("retention settings", () => {
  it("refuses a retention below a live worker's declared window unless forced with a reason, auditing every attempt", async () => {
    const deps = { prisma, pool: db.pool, actor: "admin@test", audit };
    await updateRetentionSettings({ retentionDays: 10, maxRetryWindowDays: 1 }, deps);
    const worker = registerWorker(db.pool, { workerId: "w-9d", maxRetryWindowMs: 9 * 86_400_000 });
    await worker.ready;
    try {
      await expect(updateRetentionSettings({ retentionDays: 5 }, deps)).rejects.toMatchObject({
        code: "RETENTION_REFUSED",
        blockers: [
          {
            setting: "workerMaxRetryWindow",
            message: "worker w-9d declares 9 d: lower its maxRetryWindow to 5 d or less and restart it",
          },
          { setting: "retentionDays", message: "or keep it at 9 or more" },
        ],
        message: expect.stringMatching(
          /lower that worker's retry window first \(and restart it\), keep the retention at 9 d or more/,
        ),
      });
      await expect(updateRetentionSettings({ retentionDays: 5, force: true }, deps)).rejects.toMatchObject({
        code: "RETENTION_REFUSED",
      });
      const forced = await updateRetentionSettings({ retentionDays: 5, force: true, reason: "disk full, incident 42" }, deps);
      expect(forced.settings.retentionDays).toBe(5);
      expect(forced.warnings.join()).toMatch(/forced: retention 5 d is below the 9 d retry window declared by live worker w-9d/);
      const { rows } = await auditRows();
      expect(rows.map((r) => r.result)).toEqual(["ok", "refused", "refused", "forced"]);
      expect(rows[3]?.detail).toMatchObject({ reason: "disk full, incident 42", force: true, after: { retentionDays: 5 } });
    } finally {
      await worker.stop();
    }
    // Without the worker the same change needs no force.
    await expect(updateRetentionSettings({ retentionDays: 4 }, deps)).resolves.toMatchObject({ settings: { retentionDays: 4 } });
  });

  it("warns below the observed maximum redelivery gap, and refuses a retention shorter than the fleet's window", async () => {
    const deps = { prisma, pool: db.pool, actor: "admin@test", audit };
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, created_at, max_gap_seconds) VALUES ('t', 'capture:o', 'j', 'completed', 'once', now(), $1)`,
      [6 * 86_400],
    );
    const result = await updateRetentionSettings({ retentionDays: 3, maxRetryWindowDays: 1 }, deps);
    expect(result.warnings).toEqual(["retention 3 d is below the largest redelivery gap observed (6 d)"]);
    await expect(updateRetentionSettings({ retentionDays: 2, maxRetryWindowDays: 3 }, deps)).rejects.toMatchObject({
      code: "RETENTION_INVALID",
      message: expect.stringMatching(/set the retry window to 2d or less, or the retention to 3d or more$/),
      blockers: [
        { setting: "maxRetryWindowDays", message: "must be 2 or less for a retention of 2 d" },
        { setting: "retentionDays", message: "or must be 3 or more for a retry window of 3 d" },
      ],
    });
    // `--retention-days 2` alone (the window stays 3 d): the refusal says the window must be lowered first.
    await updateRetentionSettings({ retentionDays: 7, maxRetryWindowDays: 3 }, deps);
    await expect(updateRetentionSettings({ retentionDays: 2 }, deps)).rejects.toMatchObject({
      code: "RETENTION_INVALID",
      message: expect.stringMatching(
        /lower the retry window first \(maxRetryWindowDays 2 or less; CLI: --max-retry-window-days 2\)/,
      ),
      // The setting in the way and the value it must reach: the API's issues, the CLI's lines.
      blockers: [
        { setting: "maxRetryWindowDays", message: "lower it first to 2 or less (now 3), once no worker retries for longer" },
      ],
    });
  });

  it("the page's read model shows the plan, the observed gap and the runs; apply records a run", async () => {
    const run = await applyRetention({ pool: db.pool, prisma, actor: "test", trigger: "api", audit });
    expect(run.result).toBe("success");
    const view = await getRetention(Scope.operator(), { pool: db.pool, prisma });
    expect(view.plan?.partitions.length).toBeGreaterThan(3);
    expect(view.observedMaxGapSeconds).toBe(6 * 86_400);
    expect(view.runs[0]).toMatchObject({ id: run.runId, trigger: "api", result: "success" });

    // ?runs= (the page and the API): the newest first, as many as asked.
    const second = await applyRetention({ pool: db.pool, prisma, actor: "test", trigger: "api", audit });
    const one = await getRetention(Scope.operator(), { pool: db.pool, prisma, runs: 1 });
    expect(one.runs.map((r) => r.id)).toEqual([second.runId]);
    expect((await getRetention(Scope.operator(), { pool: db.pool, prisma, runs: 2 })).runs.map((r) => r.id)).toEqual([
      second.runId,
      run.runId,
    ]);
  });
});
