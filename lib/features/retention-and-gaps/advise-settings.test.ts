import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { registerWorker } from "../../idempotency/worker-registry";
import { readEffectiveRetention } from "./advise-retention";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe("the advisor's settings, read as the partition manager reads them", () => {
  it("counts a live worker's declared retry window and the configured partition interval", async () => {
    await db.pool.query(
      `INSERT INTO retention_settings (id, retention_days, max_retry_window_days, partition_interval)
       VALUES (1, 14, 3, 'hour')
       ON CONFLICT (id) DO UPDATE SET retention_days = 14, max_retry_window_days = 3, partition_interval = 'hour'`,
    );
    expect(await readEffectiveRetention(db.pool)).toEqual({
      retentionSeconds: 14 * 86_400,
      maxRetryWindowSeconds: 3 * 86_400,
      maxRetryWindowSource: "retention_settings.max_retry_window_days (or its default)",
      partitionSeconds: 3600,
    });
    const worker = registerWorker(db.pool, { workerId: "w-9d", maxRetryWindowMs: 9 * 86_400_000 });
    await worker.ready;
    try {
      expect(await readEffectiveRetention(db.pool)).toMatchObject({
        maxRetryWindowSeconds: 9 * 86_400,
        maxRetryWindowSource: expect.stringContaining("live worker w-9d"),
      });
    } finally {
      await worker.stop();
    }
    // A stopped worker holds nothing back.
    expect((await readEffectiveRetention(db.pool)).maxRetryWindowSeconds).toBe(3 * 86_400);
  });
});
