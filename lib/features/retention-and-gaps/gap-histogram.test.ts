import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { ensureEffectPartitions } from "../../db/partitions";
import { createEffects } from "../../idempotency";
import { GAP_BUCKET_BOUNDS } from "../../idempotency/admin";
import { BUCKET_COUNT, bucketOf, GAP_BOUNDS } from "./gap-histogram";
import { histogramsByJobType, loadGapHistogramDays } from "./load-gap-histograms";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await ensureEffectPartitions(db.pool, { now: new Date(), back: 3, ahead: 1 });
});
afterAll(async () => {
  await db?.drop();
});

describe("one definition of the gap buckets", () => {
  it("the SQL function, the library (prom-client + rollups) and the console use the same bounds", async () => {
    const { rows } = await db.pool.query<{ b: number[] }>("SELECT onceboard_gap_bucket_bounds() AS b");
    expect(rows[0]?.b).toEqual([...GAP_BOUNDS]);
    expect(GAP_BOUNDS).toBe(GAP_BUCKET_BOUNDS);
    expect(BUCKET_COUNT).toBe(GAP_BUCKET_BOUNDS.length + 1);
    // Bucketing agrees with SQL's width_bucket-style `le` rule at and around every bound.
    for (const bound of GAP_BOUNDS) {
      for (const gap of [bound - 0.5, bound, bound + 0.5]) {
        const { rows: r } = await db.pool.query<{ i: number }>(
          "SELECT coalesce((SELECT min(i) FROM unnest(onceboard_gap_bucket_bounds()) WITH ORDINALITY AS u(b, i) WHERE $1 <= b), $2 + 1)::int - 1 AS i",
          [gap, GAP_BOUNDS.length],
        );
        expect(bucketOf(gap)).toBe(r[0]?.i);
      }
    }
  });
});

describe("hourly gap rollups and claims beyond retention", () => {
  it("counts a delivery published before the retention, through the library's metric and rollup", async () => {
    const registry = new Registry();
    const effects = createEffects({
      db: db.pool,
      registry,
      logger: pino({ level: "silent" }),
      rollups: true,
      flushInterval: 0,
      retention: "1d",
      maxRetryWindow: "1d",
      // This test is about the local option; registration would replace it with the database's 7 days.
      register: false,
    });
    const old = new Date(Date.now() - 2 * 86_400_000);
    const fresh = new Date();
    await effects.once({ tenant: "acme", key: "capture:o-1", jobType: "gap.test", publishedAt: fresh }, () => 1);
    // Published two days ago with a 1-day retention: its record is still here, so it is a
    // recognised duplicate, but it is counted as a claim beyond retention.
    await effects.once({ tenant: "acme", key: "capture:o-1", jobType: "gap.test", publishedAt: old }, () => 2);
    await effects.close();
    const metric = await registry.getSingleMetric("idem_claims_beyond_retention_total")?.get();
    expect(metric?.values.find((v) => v.labels.job_type === "gap.test")?.value).toBe(1);
    const { rows } = await db.pool.query(
      "SELECT sum(claims_beyond_retention)::int AS n FROM worker_stats_minute WHERE job_type = 'gap.test'",
    );
    expect(rows[0]?.n).toBe(1);
    const hour = await db.pool.query(
      "SELECT sum(claims_beyond_retention)::int AS n FROM worker_stats_hour WHERE job_type = 'gap.test'",
    );
    expect(hour.rows[0]?.n).toBe(1);
  });

  it("reads the same histogram from hour rows + edge minutes as from the minute rows alone", async () => {
    // Minute rows across three hours with upserts (insert, then add) and one delete.
    const minutes = [
      "2026-11-20T09:59:00Z",
      "2026-11-20T10:00:00Z",
      "2026-11-20T10:30:00Z",
      "2026-11-20T11:10:00Z",
      "2026-11-20T11:45:00Z",
    ];
    for (const [i, m] of minutes.entries()) {
      const buckets = Array.from({ length: BUCKET_COUNT }, (_, b) => (b === i ? 3 : b === 12 ? 1 : 0));
      for (let k = 0; k < 2; k++) {
        await db.pool.query(
          `INSERT INTO worker_stats_minute AS w (minute, job_type, gap_buckets, gap_seconds_sum, claims_beyond_retention)
           VALUES ($1, 'edge.test', $2::bigint[], 10, 1)
           ON CONFLICT (minute, job_type, marked) DO UPDATE SET gap_buckets = onceboard_add_counts(w.gap_buckets, EXCLUDED.gap_buckets),
             gap_seconds_sum = w.gap_seconds_sum + EXCLUDED.gap_seconds_sum,
             claims_beyond_retention = w.claims_beyond_retention + EXCLUDED.claims_beyond_retention`,
          [m, `{${buckets.join(",")}}`],
        );
      }
    }
    await db.pool.query("DELETE FROM worker_stats_minute WHERE job_type = 'edge.test' AND minute = '2026-11-20T11:45:00Z'");
    const direct = async (from: string, to: string) => {
      const { rows } = await db.pool.query<{ b: string[]; n: string }>(
        `SELECT array_agg(s ORDER BY i) AS b, max(n) AS n FROM (
           SELECT u.i, sum(u.v) AS s, (SELECT sum(claims_beyond_retention) FROM worker_stats_minute
                                        WHERE job_type = 'edge.test' AND minute >= $1 AND minute <= $2) AS n
             FROM worker_stats_minute, unnest(gap_buckets) WITH ORDINALITY AS u(v, i)
            WHERE job_type = 'edge.test' AND minute >= $1 AND minute <= $2 GROUP BY u.i) x`,
        [from, to],
      );
      return { buckets: (rows[0]?.b ?? []).map(Number), beyond: Number(rows[0]?.n ?? 0) };
    };
    for (const [from, to] of [
      ["2026-11-20T09:00:00Z", "2026-11-20T13:00:00Z"],
      ["2026-11-20T09:59:30Z", "2026-11-20T11:10:00Z"],
      ["2026-11-20T10:15:00Z", "2026-11-20T10:45:00Z"],
      ["2026-11-20T10:00:00Z", "2026-11-20T11:00:00Z"],
      ["2026-11-18T23:30:00Z", "2026-11-20T10:45:00Z"],
      ["2026-11-18T00:00:00Z", "2026-11-21T00:00:00Z"],
      ["2026-11-19T00:00:00Z", "2026-11-20T11:10:00Z"],
    ] as const) {
      const days = await loadGapHistogramDays(db.pool, { from: new Date(from), to: new Date(to), jobType: "edge.test" });
      const got = histogramsByJobType(days).get("edge.test");
      const want = await direct(new Date(Math.floor(Date.parse(from) / 60_000) * 60_000).toISOString(), to);
      expect({ window: [from, to], buckets: got?.buckets ?? [], beyond: got?.claimsBeyondRetention ?? 0 }).toEqual({
        window: [from, to],
        buckets: want.buckets.length ? want.buckets : [],
        beyond: want.beyond,
      });
    }
  });
});
