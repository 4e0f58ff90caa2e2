import { renderToStaticMarkup } from "react-dom/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { Scope } from "@/lib/auth/scope";
import { ensureEffectPartitions } from "@/lib/db/partitions";
import { overviewQuery } from "@/lib/features/overview/contract";
import { getOverviewSeries } from "@/lib/features/overview/get-overview-series";
import { PostgresSource } from "@/lib/features/overview/metrics/postgres-source";
import { createTestDatabase, type TestDatabase } from "@/test/database";
import { OverviewBody } from "./overview-body";
import { measureLabel } from "./time-series-chart";

// The Overview's top-tenants panel reads the URL's search params; outside Next there is none.
vi.mock("next/navigation", () => ({ useSearchParams: () => new URLSearchParams() }));

/**
 * A chart's unit is the width of the buckets its values were counted in, one definition: a
 * tenant's suppressions are only counted per hour, so over 24 hours (ten-minute points for every
 * other chart) their chart has hourly points and says "per 1 h", not an hour's count in one
 * ten-minute point and five empty ones between (a comb) under "per 10 min".
 */
const NOW = new Date("2026-11-30T12:00:30Z");
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 2 });
  await ensureEffectPartitions(db.pool, { now: NOW, back: 2, ahead: 1 });
  // acme suppressed duplicates every hour of the last day: 10 an hour.
  await db.pool.query(
    `INSERT INTO tenant_suppressions_hour (hour, tenant_id, job_type, count)
     SELECT h, 'acme', 'order.paid', 10 FROM generate_series('2026-11-29T12:00:00Z'::timestamptz, '2026-11-30T11:00:00Z', interval '1 hour') AS h`,
  );
  await db.pool.query(
    `INSERT INTO worker_stats_minute (minute, job_type, claims, suppressed, deliveries)
     SELECT m, 'order.paid', 5, 1, 5 FROM generate_series('2026-11-29T12:10:00Z'::timestamptz, '2026-11-30T11:50:00Z', interval '10 minutes') AS m`,
  );
});
afterAll(async () => {
  await db?.drop();
});

const overview = (raw: Record<string, string>) =>
  getOverviewSeries(Scope.operator(), overviewQuery.parse(raw), { db: db.pool, source: new PostgresSource(db.pool), now: NOW });

const metaOf = (html: string, id: string) =>
  new RegExp(`data-testid="chart-${id}-meta"[^>]*>([^<]*(?:<!-- -->[^<]*)*)<`).exec(html)?.[1]?.replaceAll("<!-- -->", "");

describe("chart units", () => {
  it("a tenant's suppressions over 24 hours: hourly points, each an hour's count, labelled per 1 h", async () => {
    const acme = await overview({ window: "24h", tenant: "acme" });
    expect(acme.series.stepSeconds).toBe(600);
    const buckets = acme.series.suppressionBuckets;
    expect(buckets.stepSeconds).toBe(3600);
    expect(buckets.timestamps.slice(1).map((t, i) => t - (buckets.timestamps[i] ?? 0))).toEqual(
      new Array(buckets.timestamps.length - 1).fill(3_600_000),
    );
    const line = acme.series.suppressions.find((s) => s.name === "order.paid");
    expect(line?.values).toHaveLength(buckets.timestamps.length);
    // Every hour of the day is a point of its own holding that hour's 10: no comb of zeros between.
    expect(line?.values.filter((v) => v === 10)).toHaveLength(24);
    expect(line?.values.every((v) => v === 10 || v === 0)).toBe(true);
    expect(acme.totals.suppressions).toBe(240);

    const html = renderToStaticMarkup(<OverviewBody data={acme} />);
    expect(metaOf(html, "suppressions")).toBe("suppressions per 1 h");
    expect(metaOf(html, "violations")).toBe("violations per 10 min");
    expect(html).toContain('data-step-seconds="3600"');
  });

  it("every tenant's suppressions keep the chart's own buckets, labelled with them", async () => {
    const fleet = await overview({ window: "24h" });
    expect(fleet.series.suppressionBuckets).toEqual({ stepSeconds: 600, timestamps: fleet.series.timestamps });
    const html = renderToStaticMarkup(<OverviewBody data={fleet} />);
    expect(metaOf(html, "suppressions")).toBe("suppressions per 10 min");
    expect(metaOf(html, "waits")).toBe("events per 10 min");
    expect(metaOf(html, "claim-rate")).toBe("claims/s");
    // Over a week the step is an hour for every chart, a tenant's included.
    const week = await overview({ window: "7d", tenant: "acme" });
    expect(week.series.suppressionBuckets.stepSeconds).toBe(week.series.stepSeconds);
  });

  it("names a count's axis with the width of its buckets, a rate's with its unit", () => {
    expect(measureLabel({ counts: "suppressions" }, 600)).toBe("suppressions per 10 min");
    expect(measureLabel({ counts: "violations" }, 3600)).toBe("violations per 1 h");
    expect(measureLabel({ unit: "claims/s" }, 600)).toBe("claims/s");
  });
});
