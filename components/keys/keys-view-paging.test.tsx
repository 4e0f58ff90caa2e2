import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { renderToString } from "react-dom/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSearchParams } from "@/lib/api/parse";
import { Scope } from "@/lib/auth/scope";
import { ensureEffectPartitions } from "@/lib/db/partitions";
import { KEYS_PAGE_SIZE, keysSearchQueryKey, keysSearchUrl } from "@/lib/features/keys-and-effects/keys-types";
import { searchEffects } from "@/lib/features/keys-and-effects/search-effects";
import { findingsQuery } from "@/lib/features/reconciliation/contract";
import { listFindings } from "@/lib/features/reconciliation/list-findings";
import { type FindingFilters, findingSearch } from "@/lib/features/reconciliation/reconciliation-types";
import { parseKeysPageQuery } from "@/lib/routes/page-queries";
import { createTestDatabase, type TestDatabase } from "@/test/database";
import { FindingsTable } from "../reconciliation/findings-table";
import { KeysView } from "./keys-view";

/**
 * The pages' own paging, as a user clicks it: the Keys page's "Next page" and the Reconciliation
 * page's "Older findings" are rendered from real reads, and their hrefs are parsed the way the
 * pages parse their URLs (lib/routes/page-queries.ts, findingsQuery) to read the next page. Walking
 * the links reaches every row once, past the first 50 keys, filters kept.
 */
const NOW = new Date();
const platform = Scope.ofPrincipal({ tenantId: null });
const admin = { role: "admin" as const, tenantId: null, actor: "admin@platform" };

function hrefOf(html: string, testId: string): string | null {
  const match = new RegExp(
    `<a[^>]*data-testid="${testId}"[^>]*href="([^"]+)"|<a[^>]*href="([^"]+)"[^>]*data-testid="${testId}"`,
  ).exec(html);
  const href = match?.[1] ?? match?.[2];
  return href ? href.replaceAll("&amp;", "&") : null;
}

describe("page links walk every row once", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await ensureEffectPartitions(db.pool, { back: 1, ahead: 1, now: NOW });
    // 130 keys of acme matching "inv-", at three instants (ties broken by key), and others that do not match.
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, created_at, updated_at)
       SELECT 'acme', 'invoice:inv-' || n, 'invoice.send', 'completed', 'external', t, t
         FROM generate_series(1, 130) n, LATERAL (SELECT $1::timestamptz - (n % 3) * interval '1 second' AS t) x
       UNION ALL
       SELECT 'acme', 'refund:r-' || n, 'invoice.refund', 'completed', 'external', $1::timestamptz, $1::timestamptz
         FROM generate_series(1, 20) n`,
      [new Date(NOW.getTime() - 60_000)],
    );
    // 95 findings of one run: one last_seen_at for all, ids past 9 (where text and numbers part).
    await db.pool.query(
      `INSERT INTO reconciliation_findings (identity, provider, kind, tenant_id, detail, first_seen_at, last_seen_at)
       SELECT 'f-' || n, 'stripe', 'drift', 'acme', 'amount differs on inv-' || n, $1, $1 FROM generate_series(1, 95) n`,
      [new Date(NOW.getTime() - 60_000)],
    );
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("Keys: Next page goes past 50 keys, keeps the search, and reaches each key once", async () => {
    const seen: string[] = [];
    let url: string | null = "/keys?tenant=acme&q=inv-";
    let pages = 0;
    while (url) {
      const { params, search } = parseKeysPageQuery(new URL(url, "http://console.local").searchParams, { tenantId: null });
      const result = await searchEffects(platform, { ...search, now: NOW }, db.pool);
      const client = new QueryClient();
      client.setQueryData(keysSearchQueryKey(keysSearchUrl(params, true)), result);
      const html = renderToString(
        <QueryClientProvider client={client}>
          <KeysView params={params} session={admin} />
        </QueryClientProvider>,
      );
      seen.push(...result.effects.map((e) => e.key));
      url = hrefOf(html, "keys-next");
      if (url) {
        expect(url).toContain("tenant=acme");
        expect(url).toContain("q=inv-");
      }
      if (pages > 0) expect(hrefOf(html, "keys-newest")).toBe("/keys?tenant=acme&q=inv-");
      pages++;
    }
    expect(pages).toBe(Math.ceil(130 / KEYS_PAGE_SIZE));
    expect(seen).toHaveLength(130);
    expect(new Set(seen).size).toBe(130);
    expect(seen.every((k) => k.startsWith("invoice:inv-"))).toBe(true);
  });

  it("Keys: a cursor of another search is an invalid query naming the cursor, not a page", async () => {
    const { search } = parseKeysPageQuery(new URLSearchParams("tenant=acme"), { tenantId: null });
    const first = await searchEffects(platform, { ...search, limit: 1, now: NOW }, db.pool);
    // The tenant's cursor on the every-tenant search.
    expect(() => parseKeysPageQuery(new URLSearchParams({ cursor: first.nextCursor as string }), { tenantId: null })).toThrow(
      /cursor/,
    );
  });

  it("Reconciliation: Older findings never repeats a finding of an earlier page and reaches all 95", async () => {
    const seen: string[] = [];
    let filters: FindingFilters | null = { tenant: "acme", kind: "drift", limit: "20" };
    while (filters) {
      const query = parseSearchParams(findingsQuery, new URLSearchParams(findingSearch(filters)));
      const list = await listFindings(platform, query, db.pool);
      const html = renderToString(<FindingsTable list={list} filters={filters} basis="reconciled" />);
      seen.push(...list.findings.map((f) => f.id));
      const next = hrefOf(html, "findings-next");
      filters = next ? (Object.fromEntries(new URL(next, "http://console.local").searchParams) as FindingFilters) : null;
      if (filters) expect(filters).toMatchObject({ tenant: "acme", kind: "drift", limit: "20" });
    }
    expect(seen).toHaveLength(95);
    expect(new Set(seen).size).toBe(95);
    // Newest id first: a number order (100 … 10, 9 …), not a text one.
    expect(seen.map(Number)).toEqual([...seen.map(Number)].sort((a, b) => b - a));
  });
});
