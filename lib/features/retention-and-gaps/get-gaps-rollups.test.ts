import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { Scope } from "../../auth/scope";
import { loadConfig } from "../../config";
import { reconcileProviders } from "../../reconciliation/providers";
import { adviseRetention, getRetentionAdvice, readEffectiveRetention } from "./advise-retention";
import { addInto, emptyHistogram, maxBounds, quantile, total } from "./gap-histogram";
import { getGaps } from "./get-gaps";

// The fast path (whole days from worker_gaps_day, edge hours from worker_stats_hour, edge minutes
// from worker_stats_minute, summed in SQL) against the minute rows alone, summed here with unnest:
// two windows whose edges fall inside hours (and, for the second, inside minutes), with minute rows
// on and around every boundary the fast path splits at, written, re-added, updated and deleted
// through the real table so its triggers keep the hourly and daily sums.

const JOB_TYPES = ["edge.a", "edge.b", "edge.c"];
const FIRST = Date.parse("2026-11-17T21:00:00Z");
const LAST = Date.parse("2026-11-20T07:00:00Z");
// Window 1: to on a whole minute (the closed right edge includes that minute), 2 days back.
const TO_1 = new Date("2026-11-20T05:12:00Z");
// Window 2: both edges inside a minute, inside an hour, inside a day.
const FROM_2 = new Date("2026-11-17T22:37:30Z");
const TO_2 = new Date("2026-11-20T05:12:45.500Z");

/** Deterministic counts: mostly short gaps, a few in the (3 d, 7 d] and (7 d, 14 d] buckets. */
function seededCounts(seed: number): { buckets: number[]; beyond: number } {
  let x = seed;
  const next = () => {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    return x / 2_147_483_648;
  };
  const buckets = emptyHistogram();
  for (let i = 0; i < 10; i++) buckets[i] = Math.floor(next() * (10 - i));
  if (next() < 0.05) buckets[12] = 1;
  if (next() < 0.02) buckets[13] = 1;
  return { buckets, beyond: next() < 0.1 ? 1 : 0 };
}

const arrayLiteral = (buckets: number[]) => `{${buckets.join(",")}}`;

/** Per job type, per UTC day and in all, from worker_stats_minute only, in [minute of from, to]. */
async function fromMinuteRows(db: TestDatabase, from: Date, to: Date) {
  const first = new Date(Math.floor(from.getTime() / 60_000) * 60_000);
  const { rows } = await db.pool.query<{ job_type: string; day: Date; i: number; n: string }>(
    `SELECT job_type, date_trunc('day', minute, 'UTC') AS day, u.i::int AS i, sum(u.n) AS n
       FROM worker_stats_minute, unnest(gap_buckets) WITH ORDINALITY AS u(n, i)
      WHERE minute >= $1 AND minute <= $2
      GROUP BY 1, 2, 3`,
    [first.toISOString(), to.toISOString()],
  );
  const beyond = await db.pool.query<{ job_type: string; n: string }>(
    `SELECT job_type, sum(claims_beyond_retention) AS n FROM worker_stats_minute
      WHERE minute >= $1 AND minute <= $2 GROUP BY 1`,
    [first.toISOString(), to.toISOString()],
  );
  const byJobType = new Map<string, number[]>();
  const byDay = new Map<string, number[]>();
  for (const r of rows) {
    const one = emptyHistogram();
    one[r.i - 1] = Number(r.n);
    addInto(byJobType.get(r.job_type) ?? byJobType.set(r.job_type, emptyHistogram()).get(r.job_type)!, one);
    const day = new Date(r.day).toISOString();
    addInto(byDay.get(day) ?? byDay.set(day, emptyHistogram()).get(day)!, one);
  }
  const all = emptyHistogram();
  for (const h of byJobType.values()) addInto(all, h);
  return { byJobType, byDay, all, beyond: new Map(beyond.rows.map((r) => [r.job_type, Number(r.n)])) };
}

const percentiles = (h: number[]) => ({
  samples: total(h),
  p50: quantile(h, 0.5)?.seconds ?? null,
  p90: quantile(h, 0.9)?.seconds ?? null,
  p99: quantile(h, 0.99)?.seconds ?? null,
  p999: quantile(h, 0.999)?.seconds ?? null,
  maxAtLeast: maxBounds(h)?.atLeast ?? null,
});

describe("the gap rollups' fast path", () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    // Every minute for edge.a, every 3rd for edge.b, every 11th for edge.c, from 21:00 on the 17th
    // to 07:00 on the 20th: rows on, just before and just after every hour and day boundary and
    // every window edge.
    const minutes: string[] = [];
    const jobTypes: string[] = [];
    const buckets: string[] = [];
    const beyond: number[] = [];
    for (let t = FIRST, k = 0; t <= LAST; t += 60_000, k++) {
      JOB_TYPES.forEach((jobType, j) => {
        if (k % [1, 3, 11][j]! !== 0) return;
        const c = seededCounts(k * 7 + j + 1);
        minutes.push(new Date(t).toISOString());
        jobTypes.push(jobType);
        buckets.push(arrayLiteral(c.buckets));
        beyond.push(c.beyond);
      });
    }
    const insert = `
      INSERT INTO worker_stats_minute AS w (minute, job_type, gap_buckets, gap_seconds_sum, claims_beyond_retention)
      SELECT m, j, b::bigint[], 1, n FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::bigint[]) AS u(m, j, b, n)
      ON CONFLICT (minute, job_type, marked) DO UPDATE SET gap_buckets = onceboard_add_counts(w.gap_buckets, EXCLUDED.gap_buckets),
        gap_seconds_sum = w.gap_seconds_sum + EXCLUDED.gap_seconds_sum,
        claims_beyond_retention = w.claims_beyond_retention + EXCLUDED.claims_beyond_retention`;
    await db.pool.query(insert, [minutes, jobTypes, buckets, beyond]);
    // A second flush adds to every 5th row (the upsert path of the triggers).
    const every = <T>(xs: T[], n: number) => xs.filter((_, i) => i % n === 0);
    await db.pool.query(insert, [every(minutes, 5), every(jobTypes, 5), every(buckets, 5), every(beyond, 5)]);
    // An update rewrites some rows, a delete removes others, edge minutes among them.
    await db.pool.query(
      `UPDATE worker_stats_minute SET gap_buckets = onceboard_add_counts(gap_buckets, '{0,0,0,4,0,0,0,0,0,0,0,0,1}')
        WHERE job_type = 'edge.a' AND (extract(minute FROM minute)::int % 13 = 0 OR minute IN ('2026-11-18T05:11:00Z', '2026-11-20T05:12:00Z'))`,
    );
    await db.pool.query(
      `DELETE FROM worker_stats_minute
        WHERE (job_type = 'edge.b' AND extract(minute FROM minute)::int % 17 = 0) OR (job_type = 'edge.a' AND minute = '2026-11-19T00:00:00Z')`,
    );
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("the page reads the same histograms, percentiles and daily series as the minute rows", async () => {
    for (const [from, to] of [
      [new Date(TO_1.getTime() - 2 * 86_400_000), TO_1],
      [FROM_2, TO_2],
    ] as const) {
      const want = await fromMinuteRows(db, from, to);
      const gaps = await getGaps(Scope.operator(), { range: "custom", from, to }, db.pool);
      expect(gaps.source).toBe("rollups");
      expect(Object.fromEntries(gaps.jobTypes.map((j) => [j.name, j.buckets]))).toEqual(Object.fromEntries(want.byJobType));
      for (const j of gaps.jobTypes) {
        expect({ name: j.name, ...j.stats }).toMatchObject({ name: j.name, ...percentiles(want.byJobType.get(j.name) ?? []) });
      }
      expect(gaps.all.buckets).toEqual(want.all);
      expect(gaps.all.stats).toMatchObject(percentiles(want.all));
      expect(gaps.daily).toEqual(
        [...want.byDay]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([day, h]) => ({
            day,
            samples: total(h),
            p99: quantile(h, 0.99)?.seconds ?? null,
            maxAtMost: maxBounds(h)?.atMost ?? null,
            maxAtLeast: maxBounds(h)?.atLeast ?? null,
          })),
      );
      expect(gaps.claimsBeyondRetention).toBe([...want.beyond.values()].reduce((s, n) => s + n, 0));
      // The window really is cut inside hours and has data there (the test would not see an edge otherwise).
      expect(from.getTime() % 3_600_000).not.toBe(0);
      expect(to.getTime() % 3_600_000).not.toBe(0);
      expect(want.byDay.size).toBe(3 + (from === FROM_2 ? 1 : 0));
    }
  });

  it("the advice gets the same per-job-type histograms and so the same recommendation", async () => {
    const from = new Date(TO_2.getTime() - 2 * 86_400_000);
    const want = await fromMinuteRows(db, from, TO_2);
    const advice = await getRetentionAdvice(db.pool, { now: TO_2, windowDays: 2 });
    expect(advice).toEqual(
      adviseRetention({
        from,
        to: TO_2,
        jobTypes: [...want.byJobType]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([jobType, buckets]) => ({ jobType, buckets, claimsBeyondRetention: want.beyond.get(jobType) ?? 0 })),
        ...(await readEffectiveRetention(db.pool)),
        effectsMaxGaps: [],
        providerWindows: reconcileProviders(loadConfig()),
      }),
    );
    expect(advice.status).toBe("recommended");
    expect(advice.jobTypes.map((j) => [j.jobType, j.basisUsed])).toEqual(JOB_TYPES.map((j) => [j, "p99.9"]));
  });
});
