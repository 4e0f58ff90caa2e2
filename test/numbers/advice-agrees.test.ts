import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Scope } from "../../lib/auth/scope";
import { ensureEffectPartitions } from "../../lib/db/partitions";
import { getRetentionAdvice } from "../../lib/features/retention-and-gaps/advise-retention";
import type { Advice } from "../../lib/features/retention-and-gaps/contract";
import type { Gaps } from "../../lib/features/retention-and-gaps/gaps-contract";
import { getGaps } from "../../lib/features/retention-and-gaps/get-gaps";
import { formatDuration } from "../../lib/format";
import { createTestDatabase, type TestDatabase } from "../database";

/**
 * Advice that agrees with itself (issue 35, finding 5), on a known workload of a second system
 * (tenants harbor and quay; job types billing.issue_invoice and shipping.book_courier): every
 * percentile at most the longest gap that happened, one method for a tenant and for the fleet,
 * and every sentence from the numbers the recommendation used.
 */

const DAY = 86_400;
const NOW = new Date("2026-11-30T12:00:00Z");
let db: TestDatabase;

/** Rollup histograms (bucket index → count) one day back, per job type. */
const ROLLUPS: Record<string, Record<number, number>> = {
  // 1,500 in (5 s, 15 s], 5 in (3 d, 7 d]: p99.9 interpolates to 5.8 d; the longest gap was 3.47 d.
  "billing.issue_invoice": { 2: 1500, 12: 5 },
  // 1,200 in (15 s, 1 min], 3 in (3 d, 7 d]: p99.9 interpolates to 5.4 d; the longest gap was 3.24 d.
  "shipping.book_courier": { 3: 1200, 12: 3 },
};

/** (tenant, job type, gap seconds, how many) effects, one day back. */
const EFFECTS: [string, string, number, number][] = [
  ["harbor", "billing.issue_invoice", 10, 1200],
  ["harbor", "billing.issue_invoice", 300_000, 1],
  ["harbor", "shipping.book_courier", 200_000, 1],
  ["harbor", "shipping.book_courier", 30, 2],
  ["quay", "shipping.book_courier", 280_000, 1],
  ["quay", "billing.issue_invoice", 270_000, 1],
];

beforeAll(async () => {
  db = await createTestDatabase();
  await ensureEffectPartitions(db.pool, { now: NOW, back: 3, ahead: 1 });
  await db.pool.query(
    `INSERT INTO retention_settings (id, retention_days, max_retry_window_days) VALUES (1, 7, 3)
     ON CONFLICT (id) DO UPDATE SET retention_days = 7, max_retry_window_days = 3`,
  );
  const minute = new Date(NOW.getTime() - DAY * 1000);
  for (const [jobType, counts] of Object.entries(ROLLUPS)) {
    const buckets = Array.from({ length: 16 }, (_, i) => counts[i] ?? 0);
    await db.pool.query("INSERT INTO worker_stats_minute (minute, job_type, gap_buckets) VALUES ($1, $2, $3::bigint[])", [
      minute,
      jobType,
      `{${buckets.join(",")}}`,
    ]);
  }
  for (const [i, [tenant, jobType, gap, n]] of EFFECTS.entries()) {
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, created_at, completed_at, duplicate_count, last_duplicate_at, max_gap_seconds)
       SELECT $1, format('%s:w%s-%s', $2::text, $5::int, g), $2, 'completed', 'once', $3, $3, 1, $3::timestamptz + $4 * interval '1 second', $4
         FROM generate_series(1, $6::int) g`,
      [tenant, jobType, minute, gap, i, n],
    );
  }
});
afterAll(async () => {
  await db?.drop();
});

const window = { from: new Date(NOW.getTime() - 30 * DAY * 1000), to: NOW, range: "30d" as const };

/** The advice's own consistency: what every page showing it must satisfy. */
function expectAgrees(advice: Advice) {
  for (const j of advice.jobTypes) {
    expect(j.maxExact, j.jobType).toBe(true);
    expect(j.basisSeconds, j.jobType).toBeLessThanOrEqual(j.maxSeconds ?? Number.POSITIVE_INFINITY);
  }
  const longest = Math.max(...advice.jobTypes.map((j) => j.maxSeconds ?? 0));
  const c = advice.comparison;
  expect(c.observedMaxSeconds).toBe(longest);
  expect(c.observedMaxExact).toBe(true);
  expect(c.observedMaxUpToSeconds).toBe(longest);
  // The sentences name the same numbers.
  expect(c.message).toContain(`(longest ${formatDuration(longest)})`);
  expect(c.observedMaxSource).toContain(formatDuration(longest));
  const decider = advice.jobTypes.find((j) => j.jobType === advice.decidedBy);
  expect(decider).toBeDefined();
  expect(advice.reasons.join("\n")).toContain(
    `${decider?.jobType} decides: ${decider?.basisUsed} ${formatDuration(decider?.basisSeconds ?? null)} × 2 = ${formatDuration(decider?.candidateSeconds ?? null)}`,
  );
  if (c.verdict === "ok") expect(c.message).toContain(`the recommendation (${formatDuration(advice.recommendedSeconds)})`);
}

/** The page's percentiles never exceed its longest gap. */
function expectStatsCapped(gaps: Gaps) {
  for (const s of [gaps.all, ...gaps.jobTypes]) {
    expect(s.stats.maxExact, s.name).toBe(true);
    for (const p of [s.stats.p50, s.stats.p90, s.stats.p99, s.stats.p999])
      expect(p ?? 0, s.name).toBeLessThanOrEqual(s.stats.maxAtMost ?? Number.POSITIVE_INFINITY);
  }
}

describe("retention advice on a known workload", () => {
  it("the fleet: every p99.9 capped at its job type's longest gap, 7 d, and a comparison that says so", async () => {
    const gaps = await getGaps(Scope.operator(), window, db.pool);
    const advice = gaps.advice;
    expect(advice.jobTypes.map((j) => [j.jobType, j.basisSeconds, j.maxSeconds]).sort()).toEqual([
      ["billing.issue_invoice", 300_000, 300_000],
      ["shipping.book_courier", 280_000, 280_000],
    ]);
    // 300,000 s × 2 = 6.94 d → 7 d: the retention covers it.
    expect(advice.recommendedSeconds).toBe(7 * DAY);
    expect(advice.decidedBy).toBe("billing.issue_invoice");
    expect(advice.comparison.verdict).toBe("ok");
    expectAgrees(advice);
    expectStatsCapped(gaps);
    // The API's advice (GET /api/v1/retention/advice) and the page's are one.
    const api = await getRetentionAdvice(db.pool, { now: NOW });
    expect([api.recommendedSeconds, api.decidedBy, api.comparison.message]).toEqual([
      advice.recommendedSeconds,
      advice.decidedBy,
      advice.comparison.message,
    ]);
  });

  it("a tenant: the same method on its own gaps, each longest gap exact, never a bucket's bound", async () => {
    const gaps = await getGaps(Scope.ofPrincipal({ tenantId: "harbor" }), window, db.pool);
    const advice = gaps.advice;
    const courier = advice.jobTypes.find((j) => j.jobType === "shipping.book_courier");
    // Three samples: its observed maximum stands in for p99.9, the gap that happened (2.31 d), not 7 d.
    expect(courier).toMatchObject({ basisUsed: "max", basisSeconds: 200_000, maxSeconds: 200_000 });
    // billing.issue_invoice: p99.9 of 1,201 is in (5 s, 15 s]; capped at nothing. Courier decides: 400,000 s → 5 d.
    expect(advice.decidedBy).toBe("shipping.book_courier");
    expect(advice.recommendedSeconds).toBe(5 * DAY);
    expect(advice.reasons.join("\n")).toContain("computed from harbor's gaps alone, by the same method as the platform's");
    expectAgrees(advice);
    expectStatsCapped(gaps);
    // Nothing of quay's: its longest gaps (280,000 s, 270,000 s) appear nowhere.
    expect(JSON.stringify(gaps)).not.toContain("quay");
  });
});
