import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { Scope } from "../../auth/scope";
import { ensureEffectPartitions } from "../../db/partitions";
import { parseGapsQuery } from "./gaps-query";
import { getGaps } from "./get-gaps";
import { GAPS_SEED_EXPECTED as E, GAPS_SEED_DAYS_BACK, seedGaps } from "./testing/seed-gaps";

const DAY = 86_400;

describe("getGaps", () => {
  let db: TestDatabase;
  const now = new Date();

  beforeAll(async () => {
    db = await createTestDatabase();
    await ensureEffectPartitions(db.pool, { now, back: GAPS_SEED_DAYS_BACK + 1, ahead: 1 });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("answers an empty database with no gaps and a refusal that says why", async () => {
    const gaps = await getGaps(Scope.operator(), parseGapsQuery("?range=30d", now), db.pool);
    expect(gaps.all.stats.samples).toBe(0);
    expect(gaps.advice.status).toBe("refused");
    expect(gaps.advice.refusals[0]?.code).toBe("NO_DATA");
  });

  describe("on the demo-like seed", () => {
    beforeAll(async () => {
      await seedGaps(db.pool, now);
    });

    it("says the 7-day retention is below the observed maximum, with the 28 late duplicates", async () => {
      const gaps = await getGaps(Scope.operator(), parseGapsQuery("?range=30d", now), db.pool);
      expect(gaps.source).toBe("rollups");
      expect(gaps.retentionSeconds).toBe(E.retentionDays * DAY);
      expect(gaps.maxRetryWindowSeconds).toBe(E.maxRetryWindowDays * DAY);
      expect(gaps.all.stats.samples).toBe(E.samples);
      expect(gaps.all.stats.beyondRetention).toBe(E.lateBeyondRetention);
      expect(gaps.advice.comparison.verdict).toBe("below_observed_max");
      expect(gaps.advice.comparison.lateDuplicates).toBe(E.lateBeyondRetention);
      expect(gaps.advice.status).toBe("recommended");
      expect(gaps.advice.recommendedSeconds).toBe(E.recommendedDays * DAY);
      expect(gaps.advice.decidedBy).toBe("capture-payment");
      expect(gaps.effectsMaxGap).toMatchObject({ seconds: E.effectsMaxGapSeconds, key: E.effectsMaxGapKey, tenant: "acme" });
      expect(gaps.jobTypes.map((j) => j.name)).toEqual(["capture-payment", "send-receipt"]);
      // rank 0.999 × 10,028 = 10,017.97: the 17.97th of the 28 gaps in (7 d, 14 d].
      expect(gaps.jobTypes[0]?.stats.p999).toBeCloseTo(604_800 * (1 + (0.999 * 10_028 - 10_000) / 28), 6);
      expect(gaps.daily.length).toBe(6);
    });

    it("ranks tenants by late redeliveries and lists the latest late duplicates", async () => {
      const gaps = await getGaps(Scope.operator(), parseGapsQuery("?range=30d", now), db.pool);
      expect(gaps.tenants[0]).toMatchObject({ name: E.topTenant, late: 2 });
      expect(gaps.tenants.map((t) => t.name).sort()).toEqual(["acme", "globex", "initech"]);
      expect(gaps.latestLate).toHaveLength(E.lateEffects);
      expect(gaps.latestLate.every((l) => l.gapSeconds > 3 * DAY)).toBe(true);
    });

    it("narrows to a window, a job type and a tenant", async () => {
      const week = await getGaps(Scope.operator(), parseGapsQuery("?range=7d", now), db.pool);
      expect(week.all.stats.samples).toBe(3015 + 2000 + 13 + 996);
      const receipts = await getGaps(Scope.operator(), parseGapsQuery("?range=30d&jobType=send-receipt", now), db.pool);
      expect(receipts.jobTypes.map((j) => j.name)).toEqual(["send-receipt"]);
      expect(receipts.all.stats.samples).toBe(2000);
      const acme = await getGaps(Scope.operator(), parseGapsQuery("?range=30d&tenant=acme", now), db.pool);
      expect(acme.source).toBe("effects");
      expect(acme.all.stats.samples).toBe(1);
      expect(acme.latestLate.map((l) => l.key)).toEqual([E.effectsMaxGapKey]);
    });

    it("rejects an invalid filter with the API's message", () => {
      expect(() => parseGapsQuery("?range=2y")).toThrow(/invalid query: range/);
      expect(() => parseGapsQuery("?from=2026-11-01T00:00:00Z")).toThrow(/from and to go together/);
    });
  });
});
