import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../../test/database";
import { seedReconciliation } from "../../reconciliation/testing/seed-reconciliation";
import { PostgresSource } from "./postgres-source";

/**
 * deploy/reconcile-alerts.yml evaluated over the reconciliation tables, as the Overview shows it
 * without Prometheus: a duplicate at the provider pages at once; other open findings are pending
 * for their first hour, then fire; three failed runs of a provider in an hour fire.
 */
const NOW = new Date();

describe("the reconciliation alerts over PostgreSQL", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });
  const states = async () => {
    const alerts = await new PostgresSource(db.pool).alerts(NOW);
    return Object.fromEntries(
      alerts.filter((a) => a.runbook.includes("Reconcile") || a.runbook.includes("Provider")).map((a) => [a.name, a]),
    );
  };

  it("is inactive with no findings and no failed runs", async () => {
    const s = await states();
    expect(Object.fromEntries(Object.entries(s).map(([name, a]) => [name, a.state]))).toEqual({
      OnceboardProviderDuplicateCharge: "inactive",
      OnceboardReconcileFindings: "inactive",
      OnceboardReconcileFailing: "inactive",
    });
  });

  it("pages for a duplicate at once; other findings wait an hour; three failures in an hour fire", async () => {
    await seedReconciliation(db.pool, NOW);
    let s = await states();
    expect(s.OnceboardProviderDuplicateCharge?.state).toBe("firing");
    expect(s.OnceboardProviderDuplicateCharge?.instances).toEqual([
      { labels: { provider: "stripe" }, state: "firing", value: 3 },
    ]);
    expect(s.OnceboardReconcileFindings?.state).toBe("pending");
    expect(s.OnceboardReconcileFailing?.state).toBe("inactive");

    await db.pool.query(
      "UPDATE reconciliation_findings SET first_seen_at = $1::timestamptz - interval '2 hours' WHERE kind = 'drift'",
      [NOW],
    );
    await db.pool.query(
      `INSERT INTO reconciliation_runs (provider, window_from, window_to, grace_seconds, status, trigger, started_at, finished_at, error)
       SELECT 'mailer', $1::timestamptz - interval '1 day', $1::timestamptz - interval '1 hour', 300, 'failed', 'schedule',
              $1::timestamptz - interval '20 minutes', $1::timestamptz - interval '19 minutes', 'the provider answered 401'
         FROM generate_series(1, 2)`,
      [NOW],
    );
    s = await states();
    expect(s.OnceboardReconcileFindings?.state).toBe("firing");
    expect(s.OnceboardReconcileFindings?.instances.find((i) => i.labels.kind === "drift")).toMatchObject({
      state: "firing",
      value: 3,
    });
    expect(s.OnceboardReconcileFindings?.instances.find((i) => i.labels.kind === "missing_at_provider")?.state).toBe("pending");
    expect(s.OnceboardReconcileFailing?.instances).toEqual([{ labels: { provider: "mailer" }, state: "firing", value: 3 }]);
  });
});
