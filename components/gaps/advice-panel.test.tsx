import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Scope } from "@/lib/auth/scope";
import { ensureEffectPartitions } from "@/lib/db/partitions";
import { bucketOf } from "@/lib/features/retention-and-gaps/gap-histogram";
import { parseGapsQuery } from "@/lib/features/retention-and-gaps/gaps-query";
import { getGaps } from "@/lib/features/retention-and-gaps/get-gaps";
import { formatDuration } from "@/lib/format";
import { createTestDatabase, type TestDatabase } from "@/test/database";
import { AdvicePanel } from "./advice-panel";

/**
 * The advisor's late count and the page's late list count different things (deliveries beyond the
 * retention; effects beyond the retry window): the panel shows its number and says why it need not
 * agree with the list. The data is test/mariadb-same-answers.test.ts' case: one duplicate four days
 * late, with a 7-day retention and a 3-day retry window.
 */
const DAY = 86_400;
const withQueries = (node: ReactNode) =>
  renderToStaticMarkup(<QueryClientProvider client={new QueryClient()}>{node}</QueryClientProvider>);

let db: TestDatabase;
const now = new Date();

beforeAll(async () => {
  db = await createTestDatabase();
  await ensureEffectPartitions(db.pool, { now, back: 8, ahead: 1 });
  await db.pool.query(
    `INSERT INTO retention_settings (id, retention_days, max_retry_window_days) VALUES (1, 7, 3)
     ON CONFLICT (id) DO UPDATE SET retention_days = 7, max_retry_window_days = 3`,
  );
  const gap = 4 * DAY;
  const created = new Date(now.getTime() - 5 * DAY * 1000);
  await db.pool.query(
    `INSERT INTO effects (tenant_id, key, job_type, status, policy, created_at, completed_at, duplicate_count, last_duplicate_at, max_gap_seconds)
     VALUES ('stark', 'settle:INV-900', 'settle', 'completed', 'once', $1, $1, 1, $1::timestamptz + $2 * interval '1 second', $2)`,
    [created.toISOString(), gap],
  );
  const minute = new Date(Math.floor((created.getTime() + gap * 1000) / 60_000) * 60_000);
  const buckets = Array.from({ length: bucketOf(gap) + 1 }, (_, i) => (i === bucketOf(gap) ? 1 : 0));
  await db.pool.query(
    `INSERT INTO worker_stats_minute AS w (minute, job_type, gap_buckets) VALUES ($1, 'settle', $2::bigint[])
     ON CONFLICT (minute, job_type, marked) DO UPDATE SET gap_buckets = onceboard_add_counts(w.gap_buckets, EXCLUDED.gap_buckets)`,
    [minute.toISOString(), `{${buckets.join(",")}}`],
  );
});
afterAll(async () => {
  await db?.drop();
});

describe("the retention advice's late count beside the late list", () => {
  it("shows the advisor's 0 beyond the retention and says the list's 1 is counted against the retry window", async () => {
    const gaps = await getGaps(Scope.operator(), parseGapsQuery("?range=30d", now), db.pool);
    // The two numbers the page shows: they differ, legitimately.
    expect(gaps.advice.comparison.lateDuplicates).toBe(0);
    expect(gaps.latestLate.map((l) => l.key)).toEqual(["settle:INV-900"]);
    expect(gaps.lateThresholdSeconds).toBe(3 * DAY);

    const html = withQueries(<AdvicePanel gaps={gaps} canApply={false} />);
    expect(html).toMatch(/data-testid="advice-late"[^>]*>0</);
    const note = html.match(/data-testid="advice-late-note"[^>]*>([^<]*)</)?.[1] ?? "";
    expect(note).toContain(`${formatDuration(7 * DAY)} retention`);
    expect(note).toContain(`${formatDuration(3 * DAY)} retry window (1 shown)`);
    expect(note).toContain("need not agree");
  });
});
