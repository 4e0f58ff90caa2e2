import { renderToStaticMarkup } from "react-dom/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Scope } from "@/lib/auth/scope";
import { ensureEffectPartitions } from "@/lib/db/partitions";
import { getViolationTotals } from "@/lib/features/violations/get-violation-groups";
import { listViolations } from "@/lib/features/violations/list-violations";
import { violationsPageQuery } from "@/lib/routes/page-queries";
import { createTestDatabase, type TestDatabase } from "@/test/database";
import { ViolationsTable } from "./violations-table";

/**
 * The Violations page's totals as it renders them from its reads: the total beside the list is the
 * number of rows its "Older violations" links reach, and each group's count, followed, lists that
 * many rows.
 */
const NOW = new Date();
const platform = Scope.ofPrincipal({ tenantId: null });

const hrefs = (html: string, testId: string) =>
  [...html.matchAll(/<a[^>]*>/g)]
    .map((m) => m[0])
    .filter((tag) => tag.includes(`data-testid="${testId}"`))
    .map((tag) => (/href="([^"]+)"/.exec(tag)?.[1] ?? "").replaceAll("&amp;", "&"));

describe("the Violations page's totals", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await ensureEffectPartitions(db.pool, { back: 1, ahead: 1, now: NOW });
    await db.pool.query(
      `INSERT INTO uncaught_violation_keys (id, occurred_at, tenant_id, job_type, constraint_name, key)
       SELECT gen_random_uuid(), $1::timestamptz - (n % 4) * interval '1 minute', (ARRAY['acme', 'globex'])[1 + n % 2],
              'capture', (ARRAY['orders_pkey', 'ledger_key', 'ledger_key'])[1 + n % 3], 'k-' || n
         FROM generate_series(1, 23) n`,
      [new Date(NOW.getTime() - 3_600_000)],
    );
  });
  afterAll(async () => {
    await db?.drop();
  });

  /** The page at `url`, read and rendered as app/violations/page.tsx does; its total and the rows listed. */
  async function page(url: string): Promise<{ html: string; total: number; rows: number }> {
    const values = violationsPageQuery.values(new URL(url, "http://console.local").searchParams, { tenantId: null });
    const query = violationsPageQuery.parse(values, { tenantId: null });
    const [list, totals] = await Promise.all([
      listViolations(platform, { ...query, now: NOW }, db.pool),
      getViolationTotals(platform, { ...query, now: NOW }, db.pool),
    ]);
    const filters = Object.fromEntries(values);
    const html = renderToStaticMarkup(<ViolationsTable list={list} totals={totals} filters={filters} platform />);
    const total = Number(/data-testid="violations-total">([\d,]+)</.exec(html)?.[1]?.replaceAll(",", "") ?? Number.NaN);
    return { html, total, rows: (html.match(/data-testid="violation-row"/g) ?? []).length };
  }

  /** Every row of the list from `url` on, following its "Older violations" links. */
  async function rowsFrom(url: string): Promise<number> {
    let rows = 0;
    let next: string | undefined = url;
    while (next) {
      const p = await page(next);
      rows += p.rows;
      next = hrefs(p.html, "violations-next")[0];
    }
    return rows;
  }

  it("the total is the rows the list's pages hold, and each group's count the rows its own list holds", async () => {
    const first = await page("/violations?limit=5");
    expect(first.total).toBe(23);
    expect(await rowsFrom("/violations?limit=5")).toBe(23);
    const groups = hrefs(first.html, "violation-total-link");
    expect(groups).toHaveLength(4);
    let sum = 0;
    for (const href of groups) {
      const group = await page(href);
      const shown = Number(
        new RegExp(`href="${href.replaceAll("&", "&amp;").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}"[^>]*>(\\d+)<`).exec(
          first.html,
        )?.[1],
      );
      expect(group.total, href).toBe(shown);
      expect(await rowsFrom(href), href).toBe(shown);
      sum += shown;
    }
    expect(sum).toBe(23);
  });

  it("shows no totals where there is nothing to count", async () => {
    const { html } = await page("/violations?constraint=none_such");
    expect(html).not.toContain("violation-totals");
    expect(html).toContain("No uncaught violations");
  });
});
