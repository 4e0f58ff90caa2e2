import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { Scope } from "../../auth/scope";
import { ensureEffectPartitions } from "../../db/partitions";
import { overviewQuery } from "./contract";
import { getOverviewSeries } from "./get-overview-series";
import { tenantWindows } from "./get-tenant-activity";
import { levelFor, PostgresSource } from "./metrics/postgres-source";
import { bucketsFor, chooseStep, histogramQuantile, notWiredUp, rankTenants } from "./metrics/series-math";
import { CLAIM_DURATION_BOUNDS } from "./overview-types";

const NOW = new Date("2026-11-30T12:00:30Z");
const at = (iso: string) => new Date(iso);
const q = (raw: Record<string, string>) => overviewQuery.parse(raw);

describe("series math", () => {
  it("derives the step from the chart width (a point per 4 px), never under a minute nor above 11,000 points", () => {
    expect(chooseStep(3600, 720)).toBe(60);
    expect(chooseStep(6 * 3600, 720)).toBe(120);
    expect(chooseStep(86_400, 720)).toBe(600);
    expect(chooseStep(86_400, 2880)).toBe(120);
    expect(chooseStep(7 * 86_400, 720)).toBe(3600);
    expect(chooseStep(30 * 86_400, 720)).toBe(21_600);
    expect(chooseStep(90 * 86_400, 4000)).toBe(10_800);
    for (const range of [900, 3600, 86_400, 30 * 86_400, 90 * 86_400])
      for (const width of [100, 720, 4000, 100_000]) expect(range / chooseStep(range, width)).toBeLessThanOrEqual(11_000);
  });

  it("reads the coarsest rollup level whose unit divides the step and the origin", () => {
    const level = (from: string, to: string, step: number) => levelFor(bucketsFor(at(from), at(to), step)).stats;
    expect(level("2026-11-30T11:00:30Z", "2026-11-30T12:00:30Z", 60)).toBe("worker_stats_minute");
    expect(level("2026-11-29T12:00:30Z", "2026-11-30T12:00:30Z", 300)).toBe("worker_stats_minute");
    expect(level("2026-11-29T12:00:30Z", "2026-11-30T12:00:30Z", 600)).toBe("worker_stats_10m");
    expect(level("2026-11-29T12:00:30Z", "2026-11-30T12:00:30Z", 900)).toBe("worker_stats_minute");
    expect(level("2026-11-29T12:00:30Z", "2026-11-30T12:00:30Z", 1800)).toBe("worker_stats_10m");
    expect(level("2026-10-31T12:00:30Z", "2026-11-30T12:00:30Z", 10_800)).toBe("worker_stats_hour");
    expect(level("2026-10-31T12:00:30Z", "2026-11-30T12:00:30Z", 21_600)).toBe("worker_stats_6h");
    expect(level("2026-10-31T12:00:30Z", "2026-11-30T12:00:30Z", 43_200)).toBe("worker_stats_6h");
    expect(level("2026-08-31T12:00:30Z", "2026-11-30T12:00:30Z", 86_400)).toBe("worker_stats_6h");
    // 30 days at the default 720 px steps 6 hours: the six-hour level.
    const thirty = overviewQuery.parse({ window: "30d" });
    expect(chooseStep(30 * 86_400, thirty.width)).toBe(21_600);
  });

  it("sums tenants over whole UTC days and the hours at either edge, and over hours alone for a job type", () => {
    const w = tenantWindows(at("2026-10-31T12:00:00Z").getTime(), at("2026-11-30T15:00:00Z").getTime(), null);
    expect(Object.values(w).map((d) => d.toISOString())).toEqual([
      "2026-10-31T12:00:00.000Z",
      "2026-11-30T15:00:00.000Z",
      "2026-11-01T00:00:00.000Z",
      "2026-11-30T00:00:00.000Z",
    ]);
    // A partial hour at either end counts whole (the hours overlapping the range).
    const partial = tenantWindows(at("2026-11-29T11:50:00Z").getTime(), at("2026-11-30T12:10:00Z").getTime(), null);
    expect(partial.hourFrom.toISOString()).toBe("2026-11-29T11:00:00.000Z");
    expect(partial.hourTo.toISOString()).toBe("2026-11-30T13:00:00.000Z");
    // No whole day inside: both day bounds at the hours' end, every hour read from the hourly table.
    expect(partial.dayFrom.toISOString()).toBe("2026-11-30T13:00:00.000Z");
    expect(partial.dayTo.toISOString()).toBe("2026-11-30T13:00:00.000Z");
    const byJob = tenantWindows(at("2026-10-31T12:00:00Z").getTime(), at("2026-11-30T15:00:00Z").getTime(), "capture");
    expect([byJob.dayFrom, byJob.dayTo].map((d) => d.toISOString())).toEqual([
      "2026-11-30T15:00:00.000Z",
      "2026-11-30T15:00:00.000Z",
    ]);
  });

  it("interpolates quantiles inside a bucket like histogram_quantile", () => {
    const counts = new Array(CLAIM_DURATION_BOUNDS.length + 1).fill(0);
    counts[3] = 10; // (0.005, 0.01]
    counts[4] = 10; // (0.01, 0.025]
    expect(histogramQuantile(0.5, CLAIM_DURATION_BOUNDS, counts)).toBeCloseTo(0.01, 10);
    expect(histogramQuantile(0.99, CLAIM_DURATION_BOUNDS, counts)).toBeCloseTo(0.01 + 0.015 * (9.8 / 10), 10);
    expect(histogramQuantile(0.5, CLAIM_DURATION_BOUNDS, new Array(15).fill(0))).toBeNull();
    const inf = new Array(15).fill(0);
    inf[14] = 3;
    expect(histogramQuantile(0.5, CLAIM_DURATION_BOUNDS, inf)).toBe(30);
  });

  it("flags 'not wired up' only for redeliveries without suppressions", () => {
    expect(notWiredUp(5, 0)).toBe(true);
    expect(notWiredUp(5, 1)).toBe(false);
    expect(notWiredUp(0, 0)).toBe(false);
  });

  it("ranks tenants by violations, then stuck, then suppressions, and drops quiet ones", () => {
    const ranked = rankTenants([
      { tenant: "quiet", suppressions: 0, violations: 0, stuck: 0 },
      { tenant: "noisy", suppressions: 500, violations: 0, stuck: 0 },
      { tenant: "stuck", suppressions: 1, violations: 0, stuck: 2 },
      { tenant: "buggy", suppressions: 0, violations: 1, stuck: 0 },
    ]);
    expect(ranked.map((r) => r.tenant)).toEqual(["buggy", "stuck", "noisy"]);
  });

  it("buckets a range by the step, snapped to it, each point the end of its bucket", () => {
    const b = bucketsFor(at("2026-11-30T11:00:30Z"), NOW, 60);
    expect(b.originMs).toBe(at("2026-11-30T11:00:00Z").getTime());
    expect(b.timestamps).toHaveLength(61);
    expect(b.timestamps[0]).toBe(at("2026-11-30T11:01:00Z").getTime());
  });

  it("rejects an unknown window with the API's message", () => {
    const parsed = overviewQuery.safeParse({ window: "zzz" });
    expect(parsed.success).toBe(false);
    expect(overviewQuery.safeParse({ from: "2026-11-30T10:00:00Z" }).success).toBe(false);
    expect(overviewQuery.safeParse({ from: "2026-11-30T10:00:00Z", to: "2026-11-30T09:00:00Z" }).success).toBe(false);
  });
});

describe("getOverviewSeries over seeded rollups", () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    await ensureEffectPartitions(db.pool, { now: NOW, back: 2, ahead: 1 });
    const stat = (minute: string, jobType: string, c: Record<string, number>) =>
      db.pool.query(
        `INSERT INTO worker_stats_minute (minute, job_type, claims, suppressed, in_flight, takeovers, deliveries, redeliveries, uncaught_violations)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (minute, job_type, marked) DO UPDATE SET claims = worker_stats_minute.claims + EXCLUDED.claims,
           suppressed = worker_stats_minute.suppressed + EXCLUDED.suppressed, deliveries = worker_stats_minute.deliveries + EXCLUDED.deliveries,
           redeliveries = worker_stats_minute.redeliveries + EXCLUDED.redeliveries`,
        [
          minute,
          jobType,
          c.claims ?? 0,
          c.suppressed ?? 0,
          c.inFlight ?? 0,
          c.takeovers ?? 0,
          c.deliveries ?? 0,
          c.redeliveries ?? 0,
          c.violations ?? 0,
        ],
      );
    // capture: 120 claims at 11:30, 6 suppressed; again at 11:30 through the ON CONFLICT path (the hourly trigger adds the delta).
    await stat("2026-11-30T11:30:00Z", "capture", {
      claims: 100,
      suppressed: 5,
      deliveries: 90,
      redeliveries: 8,
      inFlight: 2,
      takeovers: 1,
    });
    await stat("2026-11-30T11:30:00Z", "capture", { claims: 20, suppressed: 1, deliveries: 10, redeliveries: 2 });
    // receipt: redelivered, never suppressed (not wired up), 20 minutes ago with 25 redeliveries (the alert fires).
    await stat("2026-11-30T11:40:00Z", "receipt", { claims: 25, deliveries: 25, redeliveries: 25, violations: 2 });
    // Older: 3 days ago and 10 days ago, only in the 30-day range (read through the hourly table).
    await stat("2026-11-27T05:17:00Z", "capture", { claims: 7, suppressed: 3, deliveries: 7, redeliveries: 3 });
    await stat("2026-11-20T23:59:00Z", "capture", { claims: 1, suppressed: 1, deliveries: 1, redeliveries: 1 });
    const latency = new Array(15).fill(0);
    latency[3] = 10;
    latency[4] = 10;
    await db.pool.query(`INSERT INTO claim_latency_minute (minute, job_type, buckets) VALUES ($1, 'capture', $2)`, [
      "2026-11-30T11:30:00Z",
      latency,
    ]);
    await db.pool.query(
      `INSERT INTO uncaught_violations_minute (minute, job_type, constraint_name, count) VALUES ('2026-11-30T11:55:00Z', 'receipt', 'receipts_order_key', 2)`,
    );
    await db.pool.query(
      `INSERT INTO tenant_violations_hour (hour, tenant_id, job_type, constraint_name, count, last_key, last_seen)
       VALUES ('2026-11-30T11:00:00Z', 'globex', 'receipt', 'receipts_order_key', 2, 'receipt:order/7', '2026-11-30T11:55:10Z')`,
    );
    await db.pool.query(
      `INSERT INTO uncaught_violation_keys (occurred_at, tenant_id, job_type, constraint_name, key, message_id)
       VALUES ('2026-11-30T11:55:05Z', 'globex', 'receipt', 'receipts_order_key', 'receipt:order/6', 'msg-6'),
              ('2026-11-30T11:55:10Z', 'globex', 'receipt', 'receipts_order_key', 'receipt:order/7', 'msg-7')`,
    );
    await db.pool.query(
      `INSERT INTO tenant_suppressions_hour (hour, tenant_id, job_type, count)
       VALUES ('2026-11-30T11:00:00Z', 'acme', 'capture', 5), ('2026-11-30T11:00:00Z', 'initech', 'capture', 1)`,
    );
    // Three days ago, written by two flushes (the second through ON CONFLICT): only in the 30-day
    // range, where whole days are read from tenant_suppressions_day.
    for (const count of [3, 4])
      await db.pool.query(
        `INSERT INTO tenant_suppressions_hour AS t (hour, tenant_id, job_type, count) VALUES ('2026-11-27T05:00:00Z', 'acme', 'capture', $1)
         ON CONFLICT (hour, tenant_id, job_type, marked) DO UPDATE SET count = t.count + EXCLUDED.count`,
        [count],
      );
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, lease_until, created_at)
       VALUES ('initech', 'capture:order-9', 'capture', 'in_progress', 'external', '2026-11-30T11:50:00Z', '2026-11-30T11:45:00Z'),
              ('acme', 'capture:order-1', 'capture', 'in_progress', 'external', '2026-11-30T12:10:00Z', '2026-11-30T11:59:00Z')`,
    );
  });
  afterAll(async () => {
    await db.drop();
  });

  const get = (raw: Record<string, string>) =>
    getOverviewSeries(Scope.operator(), q(raw), { db: db.pool, source: new PostgresSource(db.pool), now: NOW });

  it("answers the last hour per minute: rates, quantiles, not wired up, totals that match the series", async () => {
    const o = await get({ window: "1h" });
    expect(o.series.stepSeconds).toBe(60);
    expect(o.series.timestamps).toHaveLength(61);
    const i = o.series.timestamps.indexOf(at("2026-11-30T11:31:00Z").getTime());
    expect(o.series.claimRate[i]).toBe(2); // 120 claims in (11:30, 11:31]
    expect(o.series.latencyP50[i]).toBeCloseTo(0.01, 10);
    expect(o.series.latencyP99[i]).toBeCloseTo(0.0247, 10);
    expect(o.series.inFlight[i]).toBe(2);
    expect(o.series.takeovers[i]).toBe(1);
    expect(o.series.suppressions).toEqual([{ name: "capture", values: expect.any(Array) }]);
    expect(o.series.suppressions[0]?.values[i]).toBe(6);
    expect(o.jobTypes).toEqual([
      {
        jobType: "capture",
        deliveries: 100,
        redeliveries: 10,
        suppressions: 6,
        claims: 120,
        uncaughtViolations: 0,
        notWiredUp: false,
      },
      {
        jobType: "receipt",
        deliveries: 25,
        redeliveries: 25,
        suppressions: 0,
        claims: 25,
        uncaughtViolations: 2,
        notWiredUp: true,
      },
    ]);
    expect(o.totals).toEqual({
      deliveries: 125,
      redeliveries: 35,
      claims: 145,
      suppressions: 6,
      uncaughtViolations: 2,
      stuck: 1,
    });
    expect(o.series.violations.map((v) => [v.name, v.values.reduce((a, b) => (a ?? 0) + (b ?? 0), 0)])).toEqual([
      ["receipt · receipts_order_key", 2],
    ]);
  });

  it("reads 24 hours per 10 minutes through the ten-minute table, and agrees with the minutes", async () => {
    const o = await get({ window: "24h" });
    expect(o.series.stepSeconds).toBe(600);
    // (11:30, 11:40]: the 11:30 minute's 120 capture claims, 6 suppressed, its latency samples.
    const i = o.series.timestamps.indexOf(at("2026-11-30T11:40:00Z").getTime());
    expect(o.series.claimRate[i]).toBeCloseTo(120 / 600, 10);
    expect(o.series.inFlight[i]).toBe(2);
    expect(o.series.takeovers[i]).toBe(1);
    expect(o.series.suppressions).toEqual([{ name: "capture", values: expect.any(Array) }]);
    expect(o.series.suppressions[0]?.values[i]).toBe(6);
    expect(o.series.latencyP50[i]).toBeCloseTo(0.01, 10);
    expect(o.series.latencyP99[i]).toBeCloseTo(0.0247, 10);
    const j = o.series.timestamps.indexOf(at("2026-11-30T11:50:00Z").getTime());
    expect(o.series.claimRate[j]).toBeCloseTo(25 / 600, 10);
    const hour = await get({ window: "1h" });
    expect(o.jobTypes).toEqual(hour.jobTypes);
    expect(o.totals).toEqual(hour.totals);
  });

  it("keeps the ten-minute and per-tenant-day tables equal to what they sum, through inserts and upserts", async () => {
    const { rows } = await db.pool.query<Record<string, string>>(
      `SELECT (SELECT sum(claims)::text FROM worker_stats_minute) AS minute_claims, (SELECT sum(claims)::text FROM worker_stats_10m) AS ten_claims,
              (SELECT sum(suppressed)::text FROM worker_stats_minute) AS minute_suppressed, (SELECT sum(suppressed)::text FROM worker_stats_10m) AS ten_suppressed,
              (SELECT sum(deliveries)::text FROM worker_stats_minute) AS minute_deliveries, (SELECT sum(deliveries)::text FROM worker_stats_10m) AS ten_deliveries,
              (SELECT string_agg(buckets::text, ' ') FROM claim_latency_minute) AS minute_latency,
              (SELECT string_agg(buckets::text, ' ') FROM claim_latency_10m) AS ten_latency,
              (SELECT string_agg(tenant_id || '=' || n, ' ' ORDER BY tenant_id) FROM (SELECT tenant_id, sum(count) AS n FROM tenant_suppressions_hour GROUP BY 1) h) AS hours,
              (SELECT string_agg(tenant_id || '=' || n, ' ' ORDER BY tenant_id) FROM (SELECT tenant_id, sum(count) AS n FROM tenant_suppressions_day GROUP BY 1) d) AS days,
              (SELECT string_agg(day::date::text, ' ' ORDER BY day) FROM (SELECT DISTINCT day FROM tenant_suppressions_day) d) AS day_list`,
    );
    expect(rows[0]).toEqual({
      minute_claims: "153",
      ten_claims: "153",
      minute_suppressed: "10",
      ten_suppressed: "10",
      minute_deliveries: "133",
      ten_deliveries: "133",
      minute_latency: "{0,0,0,10,10,0,0,0,0,0,0,0,0,0,0}",
      ten_latency: "{0,0,0,10,10,0,0,0,0,0,0,0,0,0,0}",
      hours: "acme=12 initech=1",
      days: "acme=12 initech=1",
      day_list: "2026-11-27 2026-11-30",
    });
  });

  it("reads 30 days through the six-hour table and agrees with the minutes", async () => {
    const o = await get({ window: "30d" });
    expect(o.series.stepSeconds).toBe(21_600);
    const capture = o.jobTypes.find((j) => j.jobType === "capture");
    expect(capture).toMatchObject({ claims: 128, suppressions: 10, deliveries: 108, redeliveries: 14 });
    // (06:00, 12:00]: the 11:00 hour's rows, 120 capture claims and 25 receipt claims.
    const h = o.series.timestamps.indexOf(at("2026-11-30T12:00:00Z").getTime());
    expect(o.series.claimRate[h]).toBeCloseTo(145 / 21_600, 10);
    expect(o.series.suppressions).toEqual([{ name: "capture", values: expect.any(Array) }]);
    expect(o.series.suppressions[0]?.values.reduce((a, b) => (a ?? 0) + (b ?? 0), 0)).toBe(10);
    // Every (06:00, 12:00] latency sample sits in that point: 10 in (0.005, 0.01], 10 in (0.01, 0.025].
    expect(o.series.latencyP50[h]).toBeCloseTo(0.01, 10);
    // acme: 5 today (an hour at the range's end) and 7 three days ago (a whole day, from the day table).
    expect(o.topTenants.find((t) => t.tenant === "acme")).toMatchObject({ suppressions: 12 });
    // With a job type the day table (all job types together) cannot answer: the hours do, alike.
    const byJob = await get({ window: "30d", jobType: "capture" });
    expect(byJob.topTenants.find((t) => t.tenant === "acme")).toMatchObject({ suppressions: 12 });
  });

  it("ranks tenants, lists the stuck claim and the violation group, and scopes ?tenant=", async () => {
    const o = await get({ window: "1h" });
    expect(o.topTenants).toEqual([
      { tenant: "globex", suppressions: 0, violations: 2, stuck: 0 },
      { tenant: "initech", suppressions: 1, violations: 0, stuck: 1 },
      { tenant: "acme", suppressions: 5, violations: 0, stuck: 0 },
    ]);
    expect(o.stuck).toMatchObject([{ tenant: "initech", key: "capture:order-9", jobType: "capture", overdueSeconds: 630 }]);
    // The group's count and distinct keys come from the rows: no one key stands for the group.
    expect(o.violationGroups).toEqual([
      {
        tenant: "globex",
        jobType: "receipt",
        constraint: "receipts_order_key",
        count: 2,
        keys: 2,
        lastSeen: "2026-11-30T11:55:10.000Z",
      },
    ]);

    const acme = await get({ window: "1h", tenant: "acme" });
    expect(acme.totals.suppressions).toBe(5);
    expect(acme.totals.uncaughtViolations).toBe(0);
    expect(acme.stuck).toEqual([]);
    expect(acme.violationGroups).toEqual([]);
    expect(acme.notes.join(" ")).toMatch(/per hour/);
  });

  it("filters by job type", async () => {
    const o = await get({ window: "1h", jobType: "receipt" });
    expect(o.jobTypes.map((j) => j.jobType)).toEqual(["receipt"]);
    expect(o.totals.suppressions).toBe(0);
  });

  it("answers the job-type table for ?tenant=: the tenant's suppressions and violations, marked as such", async () => {
    const fleet = await get({ window: "1h" });
    expect(fleet.jobTypes.find((j) => j.jobType === "capture")?.suppressions).toBe(6);
    const acme = await get({ window: "1h", tenant: "acme" });
    const capture = acme.jobTypes.find((j) => j.jobType === "capture");
    const receipt = acme.jobTypes.find((j) => j.jobType === "receipt");
    // The tile and the table agree: both acme's 5, not every tenant's 6.
    expect(capture?.suppressions).toBe(5);
    expect(acme.totals.suppressions).toBe(5);
    expect(receipt?.uncaughtViolations).toBe(0);
    expect(capture?.deliveries).toBe(fleet.jobTypes.find((j) => j.jobType === "capture")?.deliveries);
    expect(acme.tenantScoped).toEqual(expect.arrayContaining(["jobTypes.suppressions", "jobTypes.uncaughtViolations"]));
    expect(acme.tenantScoped).not.toContain("totals.deliveries");
    expect(acme.tenantScoped).not.toContain("alerts");
  });

  it("answers the alerts for ?jobType=: an alert firing only for another job type is inactive here and says for which", async () => {
    const capture = await get({ window: "1h", jobType: "capture" });
    const violation = capture.alerts.find((a) => a.name === "OnceboardUncaughtUniqueViolation");
    expect(violation?.state).toBe("inactive");
    expect(violation?.instances).toEqual([]);
    expect(violation?.note).toBe("Not for capture; firing for receipt.");
    const receipt = await get({ window: "1h", jobType: "receipt" });
    expect(receipt.alerts.find((a) => a.name === "OnceboardUncaughtUniqueViolation")?.state).toBe("firing");
  });

  it("says when ?jobType= names a job type no worker ever reported", async () => {
    expect((await get({ window: "1h", jobType: "capture" })).jobTypeKnown).toBe(true);
    expect((await get({ window: "1h" })).jobTypeKnown).toBe(true);
    expect((await get({ window: "1h", jobType: "captur" })).jobTypeKnown).toBe(false);
  });

  it("evaluates deploy/alerts.yml's rules over the rollups", async () => {
    const o = await get({ window: "1h" });
    const state = Object.fromEntries(o.alerts.map((a) => [a.name, a.state]));
    expect(state).toEqual({
      OnceboardUncaughtUniqueViolation: "firing",
      OnceboardRedeliveriesNotSuppressed: "firing",
      OnceboardKeyReuse: "inactive",
      OnceboardLateDuplicates: "inactive",
      OnceboardRollupFlushFailing: "unknown",
      OnceboardProviderDuplicateCharge: "inactive",
      OnceboardReconcileFindings: "inactive",
      OnceboardReconcileFailing: "inactive",
    });
    expect(o.alerts[0]?.runbook).toBe("/overview/runbook/OnceboardUncaughtUniqueViolation");
  });
});
