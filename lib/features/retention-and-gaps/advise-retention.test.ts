import { describe, expect, it } from "vitest";
import { type AdviseInput, adviseRetention } from "./advise-retention";
import { BUCKET_COUNT, emptyHistogram, quantile } from "./gap-histogram";

const DAY = 86_400;
const from = new Date("2026-11-01T00:00:00Z");
const to = new Date("2026-12-01T00:00:00Z");

/** A histogram with `counts[i]` in bucket i (bucket indexes of GAP_BUCKET_BOUNDS, 15 = open-ended). */
function hist(counts: Record<number, number>): number[] {
  const h = emptyHistogram();
  for (const [i, n] of Object.entries(counts)) h[Number(i)] = n;
  return h;
}

// Job type A: 9,980 gaps in (5 s, 15 s], 20 in (3 d, 7 d]. p99.9 = rank 9,990 = the 10th of the
// 20 in (259200, 604800] → 259200 + 345600 × 10/20 = 432,000 s (5 d) exactly.
const A = { jobType: "order.paid", buckets: hist({ 2: 9980, 12: 20 }) };
// Job type B: 1,990 in (15 s, 60 s], 10 in (12 h, 1 d]. p99.9 = rank 1,998 → 43200 + 43200 × 8/10 = 77,760 s.
const B = { jobType: "order.receipt", buckets: hist({ 3: 1990, 9: 10 }) };

const base: AdviseInput = {
  from,
  to,
  jobTypes: [A, B],
  retentionSeconds: 7 * DAY,
  maxRetryWindowSeconds: 3 * DAY,
  maxRetryWindowSource: "retention_settings.max_retry_window_days",
};

describe("gap histogram quantiles (Prometheus histogram_quantile interpolation)", () => {
  it("gives the known percentiles of the seeded distributions", () => {
    expect(quantile(A.buckets, 0.999)).toEqual({ seconds: 432_000, overflow: false });
    expect(quantile(B.buckets, 0.999)?.seconds).toBeCloseTo(77_760, 6);
    expect(quantile(A.buckets, 0.5)?.seconds).toBeCloseTo(5 + 10 * (5000 / 9980), 9);
    expect(quantile(emptyHistogram(), 0.5)).toBeNull();
    expect(quantile(hist({ [BUCKET_COUNT - 1]: 1 }), 0.5)).toEqual({ seconds: 2_592_000, overflow: true });
  });
});

describe("adviseRetention", () => {
  it("recommends the largest job type's p99.9 × 2, rounded up to whole days", () => {
    const advice = adviseRetention(base);
    expect(advice.status).toBe("recommended");
    expect(advice.refusals).toEqual([]);
    // A: 432,000 × 2 = 864,000 s = exactly 10 days; B: 155,520 s.
    expect(advice.recommendedSeconds).toBe(10 * DAY);
    expect(advice.decidedBy).toBe("order.paid");
    expect(advice.jobTypes.find((j) => j.jobType === "order.receipt")?.candidateSeconds).toBeCloseTo(155_520, 6);
  });

  it("adds the dead-letter dwell and rounds the sum up to the next partition", () => {
    const advice = adviseRetention({ ...base, deadLetterDwellSeconds: 3600, safetyFactor: 1.5 });
    // 432,000 × 1.5 + 3,600 = 651,600 s = 7.54 d → 8 d.
    expect(advice.recommendedSeconds).toBe(8 * DAY);
  });

  it("uses the observed maximum when asked (the highest bucket's upper bound)", () => {
    const advice = adviseRetention({ ...base, basis: "max" });
    // A's highest bucket is (3 d, 7 d]: 7 d × 2 = 14 d.
    expect(advice.recommendedSeconds).toBe(14 * DAY);
  });

  it("never recommends less than the largest declared retry window", () => {
    const quiet = { jobType: "order.refund", buckets: hist({ 0: 5000 }) };
    const advice = adviseRetention({ ...base, jobTypes: [quiet], maxRetryWindowSeconds: 3 * DAY });
    expect(advice.recommendedSeconds).toBe(3 * DAY);
    expect(advice.decidedBy).toBe("retry window");
    expect(advice.reasons.join(" ")).toMatch(/retry window/);
  });

  it("refuses with the reason when there are too few samples", () => {
    const advice = adviseRetention({ ...base, jobTypes: [{ jobType: "order.paid", buckets: hist({ 2: 400, 12: 1 }) }] });
    expect(advice.status).toBe("refused");
    expect(advice.recommendedSeconds).toBeNull();
    expect(advice.refusals).toEqual([expect.objectContaining({ code: "TOO_FEW_SAMPLES", jobType: null })]);
    expect(advice.refusals[0]?.message).toMatch(/401 gaps observed in the window, at least 1000/);
    expect(advice.reasons[0]).toMatch(/^no recommendation: too few samples/);
  });

  it("refuses with the reason when the open-ended top bucket holds data", () => {
    const overflowing = { jobType: "order.capture", buckets: hist({ 2: 5000, [BUCKET_COUNT - 1]: 2 }) };
    const advice = adviseRetention({ ...base, jobTypes: [A, overflowing] });
    expect(advice.status).toBe("refused");
    expect(advice.recommendedSeconds).toBeNull();
    expect(advice.refusals).toEqual([expect.objectContaining({ code: "OPEN_ENDED_BUCKET", jobType: "order.capture" })]);
    expect(advice.refusals[0]?.message).toMatch(/2 gaps longer than 30 d .*the real gap is unknown/);
  });

  it("refuses when nothing was observed", () => {
    const advice = adviseRetention({ ...base, jobTypes: [] });
    expect(advice.status).toBe("refused");
    expect(advice.refusals[0]?.code).toBe("NO_DATA");
  });

  it("flags a retention below the observed maximum, with the duplicates that came too late", () => {
    // Retention 3 d: A's 20 gaps in (3 d, 7 d] all arrived later than it allows.
    const advice = adviseRetention({ ...base, retentionSeconds: 3 * DAY });
    expect(advice.comparison.verdict).toBe("below_observed_max");
    expect(advice.comparison.belowObservedMax).toBe(true);
    expect(advice.comparison.observedMaxSeconds).toBe(3 * DAY);
    expect(advice.comparison.lateDuplicates).toBe(20);
    expect(advice.comparison.message).toMatch(/20 duplicates in the window arrived later than the retention allows/);
  });

  it("flags it from an exact per-effect gap too (3.46 d against a 3-day retention)", () => {
    const advice = adviseRetention({
      ...base,
      jobTypes: [B],
      retentionSeconds: 3 * DAY,
      effectsMaxGaps: [{ seconds: 298_944, jobType: "order.receipt", tenant: "acme", key: "receipt:o-1" }],
    });
    expect(advice.comparison.belowObservedMax).toBe(true);
    expect(advice.comparison.observedMaxSeconds).toBe(298_944);
    expect(advice.comparison.observedMaxSource).toMatch(/receipt:o-1 of tenant acme .*3\.46 d/);
  });

  it("does not flag a retention that covers every observed gap", () => {
    const advice = adviseRetention({ ...base, retentionSeconds: 14 * DAY });
    expect(advice.comparison.verdict).toBe("ok");
    expect(advice.comparison.belowObservedMax).toBe(false);
    expect(advice.comparison.lateDuplicates).toBe(0);
    const below = adviseRetention({ ...base, retentionSeconds: 8 * DAY });
    expect(below.comparison.verdict).toBe("below_recommendation");
  });

  it("caps a percentile at the observed maximum and names the bucket that bounds it", () => {
    // B with 10 more gaps in (3 d, 7 d]: p99.9 interpolates to 3 d + 4 d × 8/10 = 6.2 d, but the
    // longest gap of order.receipt was 3.47 d.
    const receipt = { jobType: "order.receipt", buckets: hist({ 3: 1990, 12: 10 }) };
    const advice = adviseRetention({
      ...base,
      jobTypes: [receipt],
      effectsMaxGaps: [{ seconds: 300_000, jobType: "order.receipt", tenant: "acme", key: "receipt:o-1" }],
    });
    const j = advice.jobTypes[0];
    expect(j?.basisSeconds).toBe(300_000);
    expect(j?.note).toMatch(
      /p99\.9 interpolated to 6\.2 d inside the 3 d–7 d bucket, above the observed maximum: capped at 3\.47 d/,
    );
    // 300,000 × 2 = 6.94 d → 7 d, not the 13 d the interpolation implied.
    expect(advice.recommendedSeconds).toBe(7 * DAY);
    expect(advice.reasons.join(" ")).toMatch(/order\.receipt: p99\.9 interpolated .* capped at 3\.47 d/);
  });
});

describe("the providers' own key windows", () => {
  const stripe = { name: "stripe", label: "Stripe", keyWindowSeconds: DAY, jobTypes: ["order.paid", "order.capture"] };
  const mailer = { name: "mailer", label: "Mailer", keyWindowSeconds: null, jobTypes: ["order.receipt"] };

  it("counts the redeliveries of a provider's job types that came after its key window; a provider that never dedupes has no line", () => {
    const advice = adviseRetention({ ...base, providerWindows: [stripe, mailer] });
    expect(advice.providers).toHaveLength(1);
    expect(advice.providers[0]).toMatchObject({
      provider: "stripe",
      jobTypes: ["order.paid"],
      afterWindow: 20,
      afterWindowUpTo: 20,
    });
    expect(advice.providers[0]?.message).toBe(
      "Stripe keeps an idempotency key for 1 d: 20 redeliveries of order.paid arrived later; Stripe would have run them again, and only Onceboard's own record stopped them. The retention must keep those records.",
    );
  });

  it("follows a configured window: a bucket straddling it counts as 'up to'", () => {
    const [fourDays] = adviseRetention({ ...base, providerWindows: [{ ...stripe, keyWindowSeconds: 4 * DAY }] }).providers;
    expect(fourDays).toMatchObject({ afterWindow: 0, afterWindowUpTo: 20 });
    const [eightDays] = adviseRetention({ ...base, providerWindows: [{ ...stripe, keyWindowSeconds: 8 * DAY }] }).providers;
    expect(eightDays?.afterWindowUpTo).toBe(0);
    expect(eightDays?.message).toContain("every observed redelivery of order.paid came within it");
  });
});
