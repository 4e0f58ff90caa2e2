import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { Scope } from "../../auth/scope";
import { ensureEffectPartitions } from "../../db/partitions";
import { readLibraryMigrations } from "../../idempotency/admin";
import { overviewQuery } from "./contract";
import { getOverviewSeries } from "./get-overview-series";
import { PostgresSource } from "./metrics/postgres-source";
import { histogramQuantile } from "./metrics/series-math";
import { CLAIM_DURATION_BOUNDS } from "./overview-types";

/**
 * worker_stats_6h / claim_latency_6h (migration 0024): the Overview reads them for 6-hour and
 * coarser steps, so each must hold exactly what the hourly level (and the minutes) sum to in the
 * same buckets, whatever order and however concurrently the minute rows arrive.
 */

const NOW = new Date("2026-11-30T12:00:30Z");
const BUCKETS = CLAIM_DURATION_BOUNDS.length + 1;

const COUNTERS = ["claims", "suppressed", "in_flight", "takeovers", "deliveries", "redeliveries"] as const;
const SUMS = COUNTERS.map((c) => `sum(${c})::text AS ${c}`).join(", ");
const SIX = "date_bin('6 hours', %s, timestamptz '2000-01-01 00:00:00+00')";
const sixOf = (column: string) => SIX.replace("%s", column);

/** The six-hour level's rows, and the hourly level's and the minutes' summed into the same buckets. */
async function levels(db: pg.Pool | pg.PoolClient) {
  const q = async (sql: string) => (await db.query(sql)).rows;
  const order = "ORDER BY 1, 2";
  return {
    six: await q(`SELECT bucket AS b, job_type, ${SUMS} FROM worker_stats_6h GROUP BY 1, 2 ${order}`),
    fromHours: await q(`SELECT ${sixOf("hour")} AS b, job_type, ${SUMS} FROM worker_stats_hour GROUP BY 1, 2 ${order}`),
    fromMinutes: await q(`SELECT ${sixOf("minute")} AS b, job_type, ${SUMS} FROM worker_stats_minute GROUP BY 1, 2 ${order}`),
    sixLatency: await q(`SELECT bucket AS b, job_type, buckets::text AS c FROM claim_latency_6h ${order}`),
    latencyFromHours: await q(`
      SELECT b, job_type, array_agg(n ORDER BY i)::text AS c FROM (
        SELECT ${sixOf("hour")} AS b, job_type, i, sum(x)::bigint AS n
          FROM claim_latency_hour, unnest(buckets) WITH ORDINALITY AS u(x, i) GROUP BY 1, 2, 3) s
       GROUP BY 1, 2 ${order}`),
    latencyFromMinutes: await q(`
      SELECT b, job_type, array_agg(n ORDER BY i)::text AS c FROM (
        SELECT ${sixOf("minute")} AS b, job_type, i, sum(x)::bigint AS n
          FROM claim_latency_minute, unnest(buckets) WITH ORDINALITY AS u(x, i) GROUP BY 1, 2, 3) s
       GROUP BY 1, 2 ${order}`),
  };
}

async function expectLevelsAgree(db: pg.Pool | pg.PoolClient) {
  const l = await levels(db);
  expect(l.six.length).toBeGreaterThan(0);
  expect(l.six).toEqual(l.fromHours);
  expect(l.six).toEqual(l.fromMinutes);
  expect(l.sixLatency).toEqual(l.latencyFromHours);
  expect(l.sixLatency).toEqual(l.latencyFromMinutes);
  return l;
}

const STAT_UPSERT = `
  INSERT INTO worker_stats_minute AS w (minute, job_type, claims, suppressed, in_flight, takeovers, deliveries, redeliveries, marked)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
  ON CONFLICT (minute, job_type, marked) DO UPDATE SET claims = w.claims + EXCLUDED.claims, suppressed = w.suppressed + EXCLUDED.suppressed,
    in_flight = w.in_flight + EXCLUDED.in_flight, takeovers = w.takeovers + EXCLUDED.takeovers,
    deliveries = w.deliveries + EXCLUDED.deliveries, redeliveries = w.redeliveries + EXCLUDED.redeliveries`;
const LATENCY_UPSERT = `
  INSERT INTO claim_latency_minute AS l (minute, job_type, buckets, marked) VALUES ($1, $2, $3, $4)
  ON CONFLICT (minute, job_type, marked) DO UPDATE SET buckets = onceboard_add_counts(l.buckets, EXCLUDED.buckets)`;

function latency(at: number, n: number): number[] {
  const c = new Array<number>(BUCKETS).fill(0);
  c[at] = n;
  return c;
}

describe("the six-hour rollup level", () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase({ poolSize: 10 });
    await ensureEffectPartitions(db.pool, { now: NOW, back: 2, ahead: 1 });
  });
  afterAll(async () => {
    await db.drop();
  });

  const stat = (
    minute: string,
    jobType: string,
    c: Partial<Record<(typeof COUNTERS)[number], number>>,
    marked = false,
    on: pg.Pool | pg.PoolClient = db.pool,
  ) =>
    on.query(STAT_UPSERT, [
      minute,
      jobType,
      c.claims ?? 0,
      c.suppressed ?? 0,
      c.in_flight ?? 0,
      c.takeovers ?? 0,
      c.deliveries ?? 0,
      c.redeliveries ?? 0,
      marked,
    ]);
  const lat = (minute: string, jobType: string, counts: number[], marked = false, on: pg.Pool | pg.PoolClient = db.pool) =>
    on.query(LATENCY_UPSERT, [minute, jobType, counts, marked]);

  it("sums the minutes per six UTC hours like the hourly level: edges, late minutes, upserts and deletes", async () => {
    // Either side of each edge: 05:59 and 06:00, the day's last minute and the next day's first.
    await stat("2026-11-30T05:59:00Z", "capture", { claims: 3, suppressed: 1, deliveries: 3, redeliveries: 1 });
    await stat("2026-11-30T06:00:00Z", "capture", { claims: 5, deliveries: 5, in_flight: 1 });
    await stat("2026-11-29T23:59:00Z", "capture", { claims: 2, takeovers: 1, deliveries: 2 });
    await stat("2026-11-30T00:00:00Z", "receipt", { claims: 4, suppressed: 4, deliveries: 4, redeliveries: 4 });
    await lat("2026-11-30T05:59:00Z", "capture", latency(3, 3));
    await lat("2026-11-30T06:00:00Z", "capture", latency(9, 5));
    // The demo's counts (marked) share the buckets with real ones.
    await stat("2026-11-30T06:30:00Z", "capture", { claims: 7, suppressed: 2, deliveries: 9, redeliveries: 2 }, true);
    await lat("2026-11-30T06:30:00Z", "capture", latency(4, 7), true);
    const before = await expectLevelsAgree(db.pool);
    // capture's minutes either side of 00:00 and of 06:00 land in three buckets, as in three hours.
    expect(before.six.filter((r) => r.job_type === "capture").map((r) => (r.b as Date).toISOString())).toEqual([
      "2026-11-29T18:00:00.000Z",
      "2026-11-30T00:00:00.000Z",
      "2026-11-30T06:00:00.000Z",
    ]);

    // A late flush: a minute of three days ago arrives now (a new row) and another one again (an upsert).
    await stat("2026-11-27T13:17:00Z", "capture", { claims: 11, suppressed: 3, deliveries: 11, redeliveries: 3 });
    await stat("2026-11-27T13:17:00Z", "capture", { claims: 1, suppressed: 1, deliveries: 2, redeliveries: 1 });
    await stat("2026-11-30T05:59:00Z", "capture", { claims: 10, deliveries: 10 });
    await lat("2026-11-27T13:17:00Z", "capture", latency(2, 11));
    await lat("2026-11-27T13:17:00Z", "capture", latency(2, 1));
    await lat("2026-11-30T05:59:00Z", "capture", latency(14, 10));
    const late = await expectLevelsAgree(db.pool);
    expect(late.six.find((r) => (r.b as Date).toISOString() === "2026-11-27T12:00:00.000Z")).toMatchObject({
      job_type: "capture",
      claims: "12",
      suppressed: "4",
    });

    // demo:reset deletes the marked minutes: their counts leave every level, and a bucket left
    // without counts goes (the 06:00 capture bucket keeps the real 06:00 minute).
    await db.pool.query("DELETE FROM worker_stats_minute WHERE marked");
    await db.pool.query("DELETE FROM claim_latency_minute WHERE marked");
    await expectLevelsAgree(db.pool);
    await db.pool.query("DELETE FROM worker_stats_minute WHERE job_type = 'receipt'");
    const after = await expectLevelsAgree(db.pool);
    expect(after.six.some((r) => r.job_type === "receipt")).toBe(false);
  });

  it("stays exact under concurrent flushes into the same buckets", async () => {
    const writers = 8;
    const flushes = 40;
    const clients = await Promise.all(Array.from({ length: writers }, () => db.pool.connect()));
    try {
      await Promise.all(
        clients.map(async (client, w) => {
          for (let i = 0; i < flushes; i++) {
            // All in one six-hour bucket, half of them on the same minute row, as workers of one job type flush.
            const minute = `2026-11-28T${String(12 + (i % 6)).padStart(2, "0")}:${i % 2 === 0 ? "00" : String(w).padStart(2, "0")}:00Z`;
            await stat(
              minute,
              "busy",
              { claims: 1 + w, suppressed: i % 3, deliveries: 1 + w, redeliveries: i % 3 },
              false,
              client,
            );
            await lat(minute, "busy", latency((w + i) % BUCKETS, 1), false, client);
          }
        }),
      );
    } finally {
      for (const c of clients) c.release();
    }
    const l = await expectLevelsAgree(db.pool);
    const busy = l.six.find((r) => r.job_type === "busy");
    // Σ over writers w of flushes × (1 + w).
    expect(busy?.claims).toBe(String(flushes * ((writers * (writers + 1)) / 2)));
  });

  it("is backfilled by migration 0024 as its triggers would have kept it", async () => {
    const kept = await levels(db.pool);
    const migration = readLibraryMigrations().find((m) => m.version === 24);
    if (!migration) throw new Error("migration 0024 not found");
    const backfill = migration.sql.slice(migration.sql.indexOf("-- What the triggers would have written"));
    expect(backfill).toMatch(/^-- What the triggers/);
    await db.pool.query("TRUNCATE worker_stats_6h, claim_latency_6h");
    await db.pool.query(backfill);
    const filled = await levels(db.pool);
    expect(filled.six).toEqual(kept.six);
    expect(filled.sixLatency).toEqual(kept.sixLatency);
  });
});

describe("the Overview at 6-hour steps (six-hour level) and at 3-hour steps (hourly level)", () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    await ensureEffectPartitions(db.pool, { now: NOW, back: 2, ahead: 1 });
    const rows: [string, string, number, number, number, number][] = [
      // minute, job type, claims, suppressed, in flight, latency bucket
      ["2026-11-30T07:10:00Z", "capture", 40, 4, 1, 2],
      ["2026-11-30T10:50:00Z", "capture", 60, 0, 0, 8],
      ["2026-11-30T11:59:00Z", "receipt", 9, 3, 2, 5],
      ["2026-11-29T00:00:00Z", "receipt", 5, 5, 0, 1],
      ["2026-11-28T17:59:00Z", "capture", 7, 1, 0, 12],
      ["2026-11-01T13:00:00Z", "capture", 3, 3, 1, 0],
    ];
    for (const [minute, jobType, claims, suppressed, inFlight, b] of rows) {
      await db.pool.query(
        `INSERT INTO worker_stats_minute (minute, job_type, claims, suppressed, in_flight, deliveries, redeliveries)
         VALUES ($1, $2, $3, $4, $5, $3, $4)`,
        [minute, jobType, claims, suppressed, inFlight],
      );
      await db.pool.query("INSERT INTO claim_latency_minute (minute, job_type, buckets) VALUES ($1, $2, $3)", [
        minute,
        jobType,
        latency(b, claims),
      ]);
    }
  });
  afterAll(async () => {
    await db.drop();
  });

  const get = (width: string) =>
    getOverviewSeries(Scope.operator(), overviewQuery.parse({ window: "30d", width }), {
      db: db.pool,
      source: new PostgresSource(db.pool),
      now: NOW,
    });
  const pairs = (values: readonly (number | null)[], offset: number) => {
    const out: number[] = [];
    for (let i = offset; i < values.length; i += 2) out.push((values[i] ?? 0) + (values[i + 1] ?? 0));
    return out;
  };

  it("shows the same totals, job types, tenants and per-point sums", async () => {
    const six = await get("720");
    const three = await get("1200");
    expect(six.series.stepSeconds).toBe(21_600);
    expect(three.series.stepSeconds).toBe(10_800);
    expect(six.from).toBe(three.from);
    expect(six.totals).toEqual(three.totals);
    expect(six.totals.claims).toBe(124);
    expect(six.jobTypes).toEqual(three.jobTypes);
    expect(six.topTenants).toEqual(three.topTenants);
    // Each 6-hour point holds the two 3-hour points ending at and 3 hours before it.
    const offset = three.series.timestamps.indexOf(six.series.timestamps[0] ?? 0) - 1;
    expect(offset).toBe(0);
    const n = six.series.timestamps.length;
    const claimsSix = six.series.claimRate.map((r) => Math.round((r ?? 0) * 21_600));
    const claimsThree = three.series.claimRate.map((r) => Math.round((r ?? 0) * 10_800));
    expect(claimsSix).toEqual(pairs(claimsThree, offset).slice(0, n));
    expect(six.series.inFlight).toEqual(pairs(three.series.inFlight, offset).slice(0, n));
    expect(six.series.suppressions.map((s) => s.name)).toEqual(three.series.suppressions.map((s) => s.name));
    for (const [k, line] of six.series.suppressions.entries())
      expect(line.values).toEqual(pairs(three.series.suppressions[k]?.values ?? [], offset).slice(0, n));
    // (06:00, 12:00]: capture's 40 samples in bucket 2 and 60 in bucket 8, receipt's 9 in bucket 5.
    const i = six.series.timestamps.indexOf(new Date("2026-11-30T12:00:00Z").getTime());
    const summed = latency(2, 40).map((c, k) => c + (latency(8, 60)[k] ?? 0) + (latency(5, 9)[k] ?? 0));
    expect(six.series.latencyP50[i]).toBe(histogramQuantile(0.5, CLAIM_DURATION_BOUNDS, summed));
    expect(six.series.latencyP99[i]).toBe(histogramQuantile(0.99, CLAIM_DURATION_BOUNDS, summed));
  });

  it("adds a minute's real and marked (demo) rows into one point of the stacked suppressions", async () => {
    await db.pool.query(
      `INSERT INTO worker_stats_minute (minute, job_type, claims, suppressed, deliveries, redeliveries, marked)
       VALUES ('2026-11-30T11:59:00Z', 'receipt', 2, 2, 2, 2, true)`,
    );
    const hour = await getOverviewSeries(Scope.operator(), overviewQuery.parse({ window: "1h" }), {
      db: db.pool,
      source: new PostgresSource(db.pool),
      now: NOW,
    });
    expect(hour.series.stepSeconds).toBe(60);
    const i = hour.series.timestamps.indexOf(new Date("2026-11-30T12:00:00Z").getTime());
    expect(hour.series.suppressions.find((s) => s.name === "receipt")?.values[i]).toBe(3 + 2);
    expect(hour.totals.suppressions).toBe(5);
  });
});
