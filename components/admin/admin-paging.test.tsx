import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { renderToString } from "react-dom/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Scope } from "@/lib/auth/scope";
import { createPrismaClient, type PrismaClient } from "@/lib/db/prisma";
import { SESSION_KEYSET, TOKEN_KEYSET } from "@/lib/features/tokens-and-sessions/admin-keysets";
import type { AdminListsData } from "@/lib/features/tokens-and-sessions/admin-page-reads";
import { readAdminLists } from "@/lib/features/tokens-and-sessions/admin-page-reads";
import { ADMIN_PAGE_SIZE } from "@/lib/features/tokens-and-sessions/admin-page-types";
import { pageQueryError, parseAdminPageQuery } from "@/lib/routes/page-queries";
import { createTestDatabase, type TestDatabase } from "@/test/database";
import { AdminLists } from "./admin-lists";

/**
 * The Tokens & sessions page's paging, as a user clicks it: its body is rendered from the page's
 * own reads, and "Next tokens" / "Next sessions" are parsed the way the page parses its URL
 * (parseAdminPageQuery) to read the next page. Each table reaches every row of the tenant once,
 * past the first page, all made at one instant, and keeps the other table's place and the tenant.
 */
const TOKENS = 2 * ADMIN_PAGE_SIZE + 31;
const SESSIONS = 2 * ADMIN_PAGE_SIZE + 13;
const platform = Scope.ofPrincipal({ tenantId: null });

function hrefOf(html: string, testId: string): string | null {
  const match = new RegExp(
    `<a[^>]*data-testid="${testId}"[^>]*href="([^"]+)"|<a[^>]*href="([^"]+)"[^>]*data-testid="${testId}"`,
  ).exec(html);
  const href = match?.[1] ?? match?.[2];
  return href ? href.replaceAll("&amp;", "&") : null;
}

function render(lists: AdminListsData, url: string): string {
  const page = parseAdminPageQuery(new URL(url, "http://console.local").searchParams);
  return renderToString(
    <QueryClientProvider client={new QueryClient()}>
      <AdminLists lists={lists} page={page} />
    </QueryClientProvider>,
  );
}

describe("Tokens & sessions page: each table's links walk every row once", () => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrismaClient(db.pool);
    const madeAt = new Date(Date.now() - 60_000);
    // acme's tokens and sessions at one instant, and globex's, which acme's pages must not show.
    await db.pool.query(
      `INSERT INTO api_tokens (name, role, tenant_id, token_hash, prefix, created_at)
       SELECT 'worker-' || n, 'viewer', CASE WHEN n % 5 = 0 THEN 'globex' ELSE 'acme' END, 'hash-' || n, 'ob_' || n, $2
         FROM generate_series(1, $1::int * 5 / 4) n`,
      [TOKENS, madeAt],
    );
    await db.pool.query(
      `INSERT INTO console_sessions (id_hash, token_id, created_at, last_seen_at, expires_at, signed_in_with)
       SELECT 'session-' || n, (SELECT id FROM api_tokens WHERE tenant_id = 'acme' ORDER BY seq LIMIT 1), $2, $2, now() + interval '1 day', 'token'
         FROM generate_series(1, $1::int) n`,
      [SESSIONS, madeAt],
    );
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await db?.drop();
  });

  /** Follows one table's Next links from `start`; checks each keeps what it must, returns the ids seen and the pages. */
  async function walk(start: string, table: "tokens" | "sessions", kept: Record<string, string>) {
    const seen: string[] = [];
    let url: string | null = start;
    let pages = 0;
    while (url) {
      const params = parseAdminPageQuery(new URL(url, "http://console.local").searchParams);
      const lists = await readAdminLists(platform, params, prisma);
      const html = render(lists, url);
      seen.push(...(table === "tokens" ? lists.tokens.tokens.map((t) => t.id) : lists.sessions.sessions.map((s) => s.id)));
      if (pages > 0) {
        const first = new URL(hrefOf(html, `${table}-first`) as string, "http://console.local");
        expect(Object.fromEntries(first.searchParams)).toEqual(kept);
      } else {
        expect(hrefOf(html, `${table}-first`)).toBeNull();
      }
      url = hrefOf(html, `${table}-next`);
      if (url) expect(Object.fromEntries(new URL(url, "http://console.local").searchParams)).toMatchObject(kept);
      pages++;
    }
    return { seen, pages };
  }

  it("Next tokens reaches each of the tenant's tokens once, keeping the sessions' page", async () => {
    const sessionsFirst = await readAdminLists(platform, { tenant: "acme" }, prisma);
    const sessionsCursor = sessionsFirst.sessions.nextCursor as string;
    const kept = { tenant: "acme", sessionsCursor };
    const { seen, pages } = await walk(`/admin?${new URLSearchParams(kept)}`, "tokens", kept);
    const { rows } = await db.pool.query<{ id: string }>(
      "SELECT id::text AS id FROM api_tokens WHERE tenant_id = 'acme' ORDER BY seq DESC",
    );
    expect(rows.length).toBeGreaterThan(2 * ADMIN_PAGE_SIZE);
    expect(pages).toBe(Math.ceil(rows.length / ADMIN_PAGE_SIZE));
    expect(seen).toEqual(rows.map((r) => r.id));
  });

  it("Next sessions reaches each live session once, keeping the tokens' page", async () => {
    const tokensFirst = await readAdminLists(platform, { tenant: "acme" }, prisma);
    const kept = { tenant: "acme", tokensCursor: tokensFirst.tokens.nextCursor as string };
    const { seen, pages } = await walk(`/admin?${new URLSearchParams(kept)}`, "sessions", kept);
    expect(pages).toBe(Math.ceil(SESSIONS / ADMIN_PAGE_SIZE));
    expect(seen).toHaveLength(SESSIONS);
    expect(new Set(seen).size).toBe(SESSIONS);
  });

  it("a table's cursor in the other's place, or none the API made, is a 400 naming it", async () => {
    const tokensCursor = TOKEN_KEYSET.encode(["5"]);
    const session = { tenantId: null };
    const swapped = await pageQueryError("/admin", new URLSearchParams({ sessionsCursor: tokensCursor }), session, () => {
      throw new Error("no database needed");
    });
    expect(swapped).toMatchObject({ code: "INVALID_INPUT", message: expect.stringContaining("sessionsCursor") });
    expect(() => parseAdminPageQuery(new URLSearchParams({ tokensCursor: SESSION_KEYSET.encode(["5"]) }))).toThrow(
      /tokensCursor/,
    );
    expect(() => parseAdminPageQuery(new URLSearchParams({ tokensCursor: "garbage" }))).toThrow(/tokensCursor/);
  });
});
