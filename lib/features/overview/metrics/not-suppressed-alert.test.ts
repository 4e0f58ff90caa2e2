import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../../test/database";
import { PostgresSource } from "./postgres-source";

/**
 * OnceboardRedeliveriesNotSuppressed on PostgreSQL reads the minute rows only of the job types for
 * which the rule holds now (ALERTS_SQL): that choice must never drop one the rule would report, at
 * the edges of its 30-minute window.
 */

const NOW = new Date("2026-11-30T12:00:30Z");
const minutesAgo = (n: number) => new Date(Date.parse("2026-11-30T12:00:00Z") - n * 60_000).toISOString();

describe("OnceboardRedeliveriesNotSuppressed over the minute rollups", () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    const rows: [string, number, number, number][] = [
      // job type, minutes before now's minute, redeliveries, suppressed
      ["edge.latest", 0, 21, 0], // in the window only now: pending
      ["edge.earliest", 29, 21, 0], // in every window of the last 16 minutes: firing
      ["edge.suppressed-outside", 5, 21, 0],
      ["edge.suppressed-outside", 30, 0, 1], // just outside (now - 30m, now]: pending, not cleared
      ["edge.redelivered-outside", 30, 21, 0], // just outside: nothing
      ["suppressing", 10, 50, 1],
      ["quiet", 3, 20, 0],
    ];
    for (const [jobType, ago, redeliveries, suppressed] of rows)
      await db.pool.query(
        "INSERT INTO worker_stats_minute (minute, job_type, redeliveries, suppressed, deliveries) VALUES ($1, $2, $3, $4, $3)",
        [minutesAgo(ago), jobType, redeliveries, suppressed],
      );
  });
  afterAll(async () => {
    await db.drop();
  });

  it("reports every job type the rule holds for, at the window's edges", async () => {
    const alerts = await new PostgresSource(db.pool).alerts(NOW);
    const rule = alerts.find((a) => a.name === "OnceboardRedeliveriesNotSuppressed");
    expect(rule?.state).toBe("firing");
    expect(
      [...(rule?.instances ?? [])]
        .map((i) => [i.labels.job_type, i.state, i.value])
        .sort(([a], [b]) => String(a).localeCompare(String(b))),
    ).toEqual([
      ["edge.earliest", "firing", 21],
      ["edge.latest", "pending", 21],
      ["edge.suppressed-outside", "pending", 21],
    ]);
  });
});
