import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { ensureEffectPartitions } from "../db/partitions";
import { getOverview } from "./get-overview";
import { OVERVIEW_WINDOWS } from "./overview-types";
import { SEED_DAYS_BACK, SEED_EXPECTED, seedOverview } from "./testing/seed-overview";

describe("getOverview", () => {
  let db: TestDatabase;
  const now = new Date();

  beforeAll(async () => {
    db = await createTestDatabase();
    await ensureEffectPartitions(db.pool, { now, back: SEED_DAYS_BACK + 1, ahead: 1 });
  });
  afterAll(async () => {
    await db.drop();
  });

  it("answers an empty database with zeros and no job types", async () => {
    const overview = await getOverview({ window: "24h", now }, db.pool);
    expect(overview.jobTypes).toEqual([]);
    expect(overview.uncaughtViolations).toEqual([]);
    expect(overview.totals).toEqual({
      effects: 0,
      in_progress: 0,
      completed: 0,
      failed: 0,
      abandoned: 0,
      stuck: 0,
      claims: 0,
      duplicateSuppressions: 0,
      uncaughtViolations: 0,
    });
    expect(overview.to).toBe(now.toISOString());
    expect(Date.parse(overview.to) - Date.parse(overview.from)).toBe(86_400_000);
  });

  describe("on the seeded database", () => {
    beforeAll(async () => {
      await seedOverview(db.pool, now);
    });

    for (const window of OVERVIEW_WINDOWS) {
      it(`counts effects, claims, suppressions and uncaught violations for ${window}`, async () => {
        const overview = await getOverview({ window, now }, db.pool);
        const expected = SEED_EXPECTED[window];
        expect(overview.window).toBe(window);
        expect(overview.totals).toEqual(expected.totals);
        const byType = Object.fromEntries(
          overview.jobTypes.map((j) => [
            j.jobType,
            {
              effects: j.effects.total,
              completed: j.effects.completed,
              in_progress: j.effects.in_progress,
              failed: j.effects.failed,
              abandoned: j.effects.abandoned,
              claims: j.claims,
              duplicateSuppressions: j.duplicateSuppressions,
              uncaughtViolations: j.uncaughtViolations,
            },
          ]),
        );
        expect(byType).toEqual(expected.jobTypes);
        // Sorted busiest first.
        const totals = overview.jobTypes.map((j) => j.effects.total);
        expect(totals).toEqual([...totals].sort((a, b) => b - a));
      });
    }

    it("lists uncaught violations per constraint, most frequent first", async () => {
      const overview = await getOverview({ window: "24h", now }, db.pool);
      expect(
        overview.uncaughtViolations.map(({ jobType, constraintName, count }) => ({ jobType, constraintName, count })),
      ).toEqual([
        { jobType: "send-receipt", constraintName: "receipts_order_id_key", count: 2 },
        { jobType: "capture-payment", constraintName: "payments_pkey", count: 1 },
      ]);
      for (const row of overview.uncaughtViolations) expect(Date.parse(row.lastSeenAt)).toBeLessThanOrEqual(now.getTime());
    });

    it("counts a stuck claim only when its lease has expired", async () => {
      const overview = await getOverview({ window: "1h", now }, db.pool);
      const capture = overview.jobTypes.find((j) => j.jobType === "capture-payment");
      expect(capture?.effects.in_progress).toBe(2);
      expect(capture?.stuck).toBe(1);
    });
  });
});
