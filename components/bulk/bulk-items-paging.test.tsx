import { randomBytes } from "node:crypto";
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { renderToString } from "react-dom/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as itemsRoute from "@/app/api/v1/bulk/[id]/items/route";
import { Scope } from "@/lib/auth/scope";
import { createToken } from "@/lib/auth/tokens";
import { getPrisma } from "@/lib/db/prisma";
import { getBulkAction } from "@/lib/features/bulk-actions/bulk-actions";
import {
  BULK_ITEMS_PANEL_SIZE,
  bulkActionQueryKey,
  bulkItemsQueryKey,
  bulkItemsUrl,
} from "@/lib/features/bulk-actions/bulk-types";
import type { BulkItemsResponse } from "@/lib/features/bulk-actions/contract";
import { createTestDatabase, type TestDatabase } from "@/test/database";
import { BulkItemsTable } from "./bulk-items";
import { BulkProgress } from "./bulk-progress";

/**
 * The bulk progress panel's items, as a user pages them: the panel is rendered from the real
 * GET /api/v1/bulk/{id}/items (its route, a viewer's token), and "Later items" is followed with
 * the URL the panel fetches for its cursor. Every item is reached once, in run order, though all
 * were done at one instant.
 */
const ITEMS = 2 * BULK_ITEMS_PANEL_SIZE + 7;
const TENANT = "acme";

function attribute(html: string, testId: string, name: string): string | null {
  const tag = new RegExp(`<button[^>]*data-testid="${testId}"[^>]*>`).exec(html)?.[0];
  const value = tag ? new RegExp(`${name}="([^"]*)"`).exec(tag)?.[1] : undefined;
  return value === undefined ? null : value.replaceAll("&amp;", "&");
}

describe("bulk progress panel: item pages", () => {
  let db: TestDatabase;
  let actionId: string;
  let headers: Record<string, string>;
  beforeAll(async () => {
    db = await createTestDatabase();
    process.env.DATABASE_URL = db.url;
    process.env.ONCEBOARD_RATE_LIMIT_PER_MINUTE = "1000000";
    process.env.ONCEBOARD_RATE_LIMIT_PER_ADDRESS_PER_MINUTE = "1000000";
    const { rows } = await db.pool.query<{ id: string }>(
      `INSERT INTO bulk_actions (kind, tenant_id, filter, state, total, processed, applied, actor, role, finished_at)
       VALUES ('release_stuck_claims', $1, '{}', 'done', $2, $2, $2 - $2 / 3, 'tester', 'operator', now()) RETURNING id::text AS id`,
      [TENANT, ITEMS],
    );
    actionId = rows[0]?.id as string;
    // Keys out of seq order (key-47 runs first), every item done at one instant, one in three refused.
    await db.pool.query(
      `INSERT INTO bulk_action_items (action_id, seq, key, outcome, done_at)
       SELECT $1::uuid, n, 'stuck:key-' || ($2 + 1 - n), CASE WHEN n % 3 = 0 THEN 'lease_alive' ELSE 'ok' END, now() - interval '1 minute'
         FROM generate_series(1, $2::int) n`,
      [actionId, ITEMS],
    );
    const { secret } = await createToken({ name: `items-${randomBytes(3).toString("hex")}`, tenantId: TENANT, role: "viewer" });
    headers = { authorization: `Bearer ${secret}`, host: "console.test" };
  });
  afterAll(async () => {
    await getPrisma().$disconnect();
    await db?.drop();
  });

  async function read(url: string): Promise<BulkItemsResponse> {
    const response = await itemsRoute.GET(new Request(`http://console.test${url}`, { headers }), {
      params: Promise.resolve({ id: actionId }),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as BulkItemsResponse;
  }

  it("Later items walks every item once, in run order, with their statuses", async () => {
    const first = await read(bulkItemsUrl(actionId, null));
    const client = new QueryClient();
    client.setQueryData(bulkActionQueryKey(actionId), {
      action: await getBulkAction(Scope.ofPrincipal({ tenantId: TENANT }), actionId),
    });
    client.setQueryData(bulkItemsQueryKey(actionId, null), first);
    const wording = { title: "Bulk release", done: "released", refused: "refused" };
    let html = renderToString(
      <QueryClientProvider client={client}>
        <BulkProgress actionId={actionId} wording={wording} invalidates={["keys"]} onDone={() => {}} />
      </QueryClientProvider>,
    );
    expect(html).toContain('data-testid="bulk-items"');
    expect(html).toContain("refused: lease_alive");
    expect(attribute(html, "bulk-items-earlier", "data-testid")).toBeNull();

    const seen: number[] = [...first.items.map((item) => item.seq)];
    const keys: string[] = [...first.items.map((item) => item.key)];
    let pages = 1;
    for (let cursor = attribute(html, "bulk-items-later", "data-cursor"); cursor; ) {
      const page = await read(bulkItemsUrl(actionId, cursor));
      html = renderToString(<BulkItemsTable page={page} done="released" earlier={() => {}} later={() => {}} />);
      expect(attribute(html, "bulk-items-earlier", "data-testid")).toBe("bulk-items-earlier");
      seen.push(...page.items.map((item) => item.seq));
      keys.push(...page.items.map((item) => item.key));
      cursor = attribute(html, "bulk-items-later", "data-cursor");
      pages++;
    }
    expect(pages).toBe(Math.ceil(ITEMS / BULK_ITEMS_PANEL_SIZE));
    expect(seen).toEqual(Array.from({ length: ITEMS }, (_, i) => i + 1));
    expect(new Set(keys).size).toBe(ITEMS);
  });
});
