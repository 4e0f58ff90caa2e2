import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { renderToStaticMarkup } from "react-dom/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeysView } from "@/components/keys/keys-view";
import type { Principal, Role } from "@/lib/auth/auth-types";
import { Scope } from "@/lib/auth/scope";
import { ensureEffectPartitions } from "@/lib/db/partitions";
import { getPrisma } from "@/lib/db/prisma";
import { readStatesPage } from "@/lib/features/keys-and-effects/audited-state-reads";
import { keysSearchQueryKey, keysSearchUrl } from "@/lib/features/keys-and-effects/keys-types";
import { searchEffects } from "@/lib/features/keys-and-effects/search-effects";
import { STATES_SEED, seedStates } from "@/lib/features/keys-and-effects/testing/seed-states";
import { statesPageQuery } from "@/lib/routes/page-queries";
import { createTestDatabase, type TestDatabase } from "@/test/database";
import { StatesView } from "./states-view";

/**
 * The States page as it renders from the read models' answers (the page's own load), walked as a
 * user clicks it: the count beside each state is the number of rows its "Next page" links reach,
 * a failed effect shows its error and attempts, and a platform operator who has named no tenant
 * is told how to reach the bulk release (the Keys page too), a viewer is shown none.
 */
const NOW = new Date(Math.floor(Date.now() / 1000) * 1000);
const principalOf = (tenantId: string | null, role: Role): Principal => ({
  tokenId: null,
  actor: `test ${role}`,
  tenantId,
  role,
});

function hrefsOf(html: string, testId: string): string[] {
  const found: string[] = [];
  const pattern = new RegExp(`<a[^>]*data-testid="${testId}"[^>]*>|<a[^>]*>`, "g");
  for (const tag of html.match(pattern) ?? []) {
    if (!tag.includes(`data-testid="${testId}"`)) continue;
    const href = /href="([^"]+)"/.exec(tag)?.[1];
    if (href) found.push(href.replaceAll("&amp;", "&"));
  }
  return found;
}

/** The page at `url` for `principal`: parsed as the page parses it, read as it reads, rendered. */
async function render(url: string, principal: Principal): Promise<{ html: string; rows: number }> {
  const session = { tenantId: principal.tenantId };
  const raw = new URL(url, "http://console.local").searchParams;
  const values = statesPageQuery.values(raw, session);
  const { state, list } = statesPageQuery.parse(values, session);
  const scope = Scope.ofPrincipal(principal);
  const data = await readStatesPage({ principal, scope, ip: null, state, list: { ...list, limit: 2 }, now: NOW });
  const html = renderToStaticMarkup(
    <StatesView
      state={state}
      counts={data.counts}
      rows={data.rows}
      filters={{
        tenant: scope.platform ? values.get("tenant") : null,
        jobType: values.get("jobType"),
        from: values.get("from"),
        to: values.get("to"),
        cursor: values.get("cursor"),
      }}
      platform={scope.platform}
      role={principal.role}
    />,
  );
  return { html, rows: (html.match(/data-testid="state-row"/g) ?? []).length };
}

const countIn = (html: string, state: string) =>
  Number(
    new RegExp(`data-state="${state}"[^>]*>.*?data-testid="state-count">([\\d,]+)<`).exec(html)?.[1]?.replaceAll(",", "") ??
      Number.NaN,
  );

describe("the States page", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    process.env.DATABASE_URL = db.url;
    await ensureEffectPartitions(db.pool, { back: 1, ahead: 1, now: NOW });
    await seedStates(db.pool, NOW);
    // Five more failed effects of acme, at one instant: the list takes three pages of two.
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, error, created_at, updated_at)
       SELECT 'acme', 'charge:st-more-' || n, 'charge-card', 'failed', 'external', 2, 'timeout', $1, $1 FROM generate_series(1, 5) n`,
      [new Date(NOW.getTime() - 30 * 60_000)],
    );
  });
  afterAll(async () => {
    await getPrisma().$disconnect();
    await db?.drop();
  });

  it("walks each state's pages: the count beside it is the rows its Next page links reach, each once", async () => {
    const viewer = principalOf("acme", "viewer");
    const first = await render("/states", viewer);
    for (const state of ["in_progress", "stuck", "failed", "abandoned", "completed", "key_reuse"]) {
      const expected = countIn(first.html, state);
      expect(expected, state).not.toBeNaN();
      const seen: string[] = [];
      let url: string | undefined = `/states?state=${state}`;
      while (url) {
        const page = await render(url, viewer);
        expect(countIn(page.html, state)).toBe(expected);
        expect(page.html).toContain(`data-testid="state-list-count">${expected}<`);
        seen.push(...hrefsOf(page.html, "state-key"));
        url = hrefsOf(page.html, "states-next")[0];
      }
      expect(seen.length, state).toBe(expected);
      if (state !== "key_reuse") expect(new Set(seen).size, state).toBe(expected);
    }
    expect(countIn(first.html, "failed")).toBe(6);
    // The default list is the failed one, and it shows the library's error (redacted) and the attempts.
    expect(/<a[^>]*data-state="failed"[^>]*>/.exec(first.html)?.[0]).toContain('aria-current="page"');
    expect(/<a[^>]*data-state="stuck"[^>]*>/.exec(first.html)?.[0]).not.toContain("aria-current");
    // The seed's failed effect alone: created two hours ago, the five others half an hour ago.
    const window = new URLSearchParams({
      state: "failed",
      jobType: STATES_SEED.jobType,
      from: new Date(NOW.getTime() - 3 * 3_600_000).toISOString(),
      to: new Date(NOW.getTime() - 3_600_000).toISOString(),
    });
    const failed = await render(`/states?${window}`, viewer);
    expect(failed.rows).toBe(1);
    expect(failed.html).toContain(STATES_SEED.failedErrorShown);
    expect(failed.html).not.toContain("billing-acme@example.com");
    expect(failed.html).toMatch(/data-testid="state-attempts"[^>]*>3</);
  });

  it("a tenant's page shows its own tenant only, whatever ?tenant= says", async () => {
    for (const state of ["failed", "abandoned", "completed", "in_progress", "key_reuse"]) {
      const { html } = await render(`/states?state=${state}&tenant=globex`, principalOf("acme", "viewer"));
      expect(html, state).not.toContain("st-globex");
      expect(html).not.toContain("msg-st-globex");
    }
    const platform = await render("/states?state=failed&tenant=globex", principalOf(null, "viewer"));
    expect(platform.html).toContain("st-globex");
    expect(platform.html).not.toContain("st-acme");
    const everyTenant = await render("/states?state=abandoned", principalOf(null, "viewer"));
    expect(everyTenant.html).toContain('data-testid="state-tenant"');
  });

  it("the stuck list tells a platform operator how to release in bulk, links a named tenant's to the Keys page, and shows a viewer neither", async () => {
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, owner, lease_until, created_at, updated_at)
       VALUES ('acme', 'charge:st-acme-stalled', 'charge-card', 'in_progress', 'external', 'w-gone', $1, $1, $1)`,
      [new Date(NOW.getTime() - 10 * 60_000)],
    );
    const operator = await render("/states?state=stuck", principalOf(null, "operator"));
    expect(operator.html).toContain('data-testid="bulk-release-hint"');
    expect(operator.html).toContain("name a tenant");
    const named = await render("/states?state=stuck&tenant=acme", principalOf(null, "operator"));
    expect(named.html).not.toContain('data-testid="bulk-release-hint"');
    expect(hrefsOf(named.html, "bulk-release-link")).toEqual(["/keys?tenant=acme"]);
    const viewer = await render("/states?state=stuck", principalOf(null, "viewer"));
    expect(viewer.html).not.toContain("bulk-release");
  });

  it("the Keys page shows a platform operator who named no tenant where bulk release is; with a tenant, the panel itself", async () => {
    const html = async (tenant: string | undefined, role: Role) => {
      const params = tenant ? { tenant } : {};
      const client = new QueryClient();
      const result = await searchEffects(Scope.ofPrincipal({ tenantId: null }), { tenant, limit: 50, now: NOW }, db.pool);
      client.setQueryData(keysSearchQueryKey(keysSearchUrl(params, true)), result);
      return renderToStaticMarkup(
        <QueryClientProvider client={client}>
          <KeysView params={params} session={{ role, tenantId: null, actor: "test" }} />
        </QueryClientProvider>,
      );
    };
    const unnamed = await html(undefined, "operator");
    expect(unnamed).toContain('data-testid="bulk-release-hint"');
    expect(unnamed).not.toContain('data-testid="bulk-release"');
    const named = await html("acme", "admin");
    expect(named).toContain('data-testid="bulk-release"');
    expect(named).not.toContain('data-testid="bulk-release-hint"');
    expect(await html(undefined, "viewer")).not.toContain("bulk-release");
  });
});
