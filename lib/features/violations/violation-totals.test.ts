import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { Scope } from "../../auth/scope";
import { ensureEffectPartitions } from "../../db/partitions";
import { overviewQuery } from "../overview/contract";
import { getOverviewSeries } from "../overview/get-overview-series";
import { PostgresSource } from "../overview/metrics/postgres-source";
import { getViolationTotals } from "./get-violation-groups";
import { listViolations, type ViolationSearch } from "./list-violations";

/**
 * The Violations page's totals against PostgreSQL: the total is the number of rows the list pages
 * through with the same filter, each group's count the rows of its own filtered list, and over
 * the Overview's window the total is the Overview's violation figure (its banner links there).
 */
const NOW = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 30_000);
const platform = Scope.ofPrincipal({ tenantId: null });
const acme = Scope.ofPrincipal({ tenantId: "acme" });

async function pagedCount(db: TestDatabase, scope: Scope, search: Omit<ViolationSearch, "cursor" | "limit">): Promise<number> {
  let n = 0;
  let cursor: string | undefined;
  do {
    const page = await listViolations(scope, { ...search, cursor, limit: 7 }, db.pool);
    n += page.violations.length;
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return n;
}

describe("violation totals", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await ensureEffectPartitions(db.pool, { back: 3, ahead: 1, now: NOW });
    // 60 violations over the last 40 hours: three tenants, two job types, three constraints, a key
    // hit more than once; some at one instant (the list's ties).
    await db.pool.query(
      `INSERT INTO uncaught_violation_keys (id, occurred_at, tenant_id, job_type, constraint_name, key)
       SELECT gen_random_uuid(), $1::timestamptz - (n % 20) * interval '2 hours' - (n % 3) * interval '1 minute',
              (ARRAY['acme', 'globex', 'initech'])[1 + n % 3], (ARRAY['capture', 'receipt'])[1 + n % 2],
              (ARRAY['orders_pkey', 'ledger_key', 'receipts_key'])[1 + n % 5 % 3], 'k-' || (n % 17)
         FROM generate_series(1, 60) n`,
      [NOW],
    );
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("the total is the rows the list pages through, and each group's count its own list's, for every filter", async () => {
    const filters: [Scope, Omit<ViolationSearch, "cursor" | "limit">][] = [
      [platform, { now: NOW }],
      [acme, { now: NOW }],
      [acme, { tenant: "globex", now: NOW }],
      [platform, { tenant: "globex", jobType: "capture", now: NOW }],
      [platform, { constraint: "ledger_key", from: new Date(NOW.getTime() - 20 * 3_600_000), now: NOW }],
    ];
    for (const [scope, search] of filters) {
      const totals = await getViolationTotals(scope, search, db.pool);
      const label = JSON.stringify(search);
      expect(totals.total, label).toBe(await pagedCount(db, scope, search));
      expect(totals.total, label).toBeGreaterThan(0);
      expect(
        totals.groups.reduce((sum, g) => sum + g.count, 0),
        label,
      ).toBe(totals.total);
      expect(totals.groups).toHaveLength(totals.groupCount);
      for (const g of totals.groups) {
        const group = { ...search, tenant: g.tenant, jobType: g.jobType, constraint: g.constraint };
        expect(g.count, `${label} ${g.tenant}/${g.jobType}/${g.constraint}`).toBe(await pagedCount(db, platform, group));
      }
      if (!scope.platform) expect(totals.groups.every((g) => g.tenant === "acme")).toBe(true);
    }
  });

  it("over the Overview's window the total is the Overview's violation figure, for the platform and a tenant", async () => {
    for (const scope of [platform, acme]) {
      for (const window of ["24h", "7d"]) {
        const overview = await getOverviewSeries(scope, overviewQuery.parse({ window }), {
          db: db.pool,
          source: new PostgresSource(db.pool),
          now: NOW,
        });
        const totals = await getViolationTotals(scope, { from: new Date(overview.from), to: new Date(overview.to) }, db.pool);
        expect(totals.total, `${window} ${scope.tenant ?? "platform"}`).toBe(overview.totals.uncaughtViolations);
        expect(totals.total).toBeGreaterThan(0);
      }
    }
  });
});
