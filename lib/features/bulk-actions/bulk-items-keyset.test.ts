import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { Scope } from "../../auth/scope";
import { assertPagesExactlyOnce, type ListUnderTest } from "../../console/testing/keyset-property";
import { createPrismaClient, type PrismaClient } from "../../db/prisma";
import { BULK_ITEM_KEYSET, listBulkItems } from "./bulk-actions";

/**
 * A bulk action's items (GET /api/v1/bulk/{id}/items) held to the keyset property of every list
 * (lib/console/testing/keyset-property.ts): items done at one instant, any page size, items added
 * while paging — every item present at the start read once, in run order (seq). Another action's
 * items, at the very same seqs, are never on its pages.
 */
const acme = Scope.ofPrincipal({ tenantId: "acme" });

async function newAction(db: TestDatabase, tenant: string): Promise<string> {
  const { rows } = await db.pool.query<{ id: string }>(
    `INSERT INTO bulk_actions (kind, tenant_id, filter, state, total, actor, role)
     VALUES ('release_stuck_claims', $1, '{}', 'cancelled', 0, 'tester', 'operator') RETURNING id::text AS id`,
    [tenant],
  );
  return rows[0]?.id as string;
}

/** One item per time, after the action's last seq; done at that time, applied or refused by turns. */
async function addItems(db: TestDatabase, actionId: string, times: Date[]): Promise<string[]> {
  const { rows } = await db.pool.query<{ id: string }>(
    `INSERT INTO bulk_action_items (action_id, seq, key, outcome, done_at)
     SELECT $1::uuid, base.last + n, 'stuck:' || gen_random_uuid(), CASE WHEN n % 2 = 0 THEN 'ok' ELSE 'lease_alive' END, t
       FROM unnest($2::timestamptz[]) WITH ORDINALITY AS u(t, n),
            (SELECT coalesce(max(seq), 0) AS last FROM bulk_action_items WHERE action_id = $1::uuid) base
      ORDER BY n RETURNING key AS id`,
    [actionId, times],
  );
  return rows.map((r) => r.id);
}

describe("bulk action items: keyset pages", () => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrismaClient(db.pool);
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await db?.drop();
  });

  it("in run order (seq), equal done times included, never another action's items", async () => {
    let actionId = "";
    const items: ListUnderTest = {
      async reset(db) {
        await db.pool.query("DELETE FROM bulk_actions");
        actionId = await newAction(db, "acme");
        // Another action of the same tenant, its items at the same seqs and times.
        const other = await newAction(db, "acme");
        await addItems(db, other, [new Date(), new Date(), new Date()]);
      },
      insert: (db, times) => addItems(db, actionId, times),
      async page(_db, limit, cursor) {
        const page = await listBulkItems(acme, actionId, { limit, cursor }, prisma);
        return { ids: page.items.map((item) => item.key), nextCursor: page.nextCursor };
      },
      async declaredOrder(db) {
        const { rows } = await db.pool.query<{ rid: string }>(
          "SELECT key AS rid FROM bulk_action_items WHERE action_id = $1::uuid ORDER BY seq ASC",
          [actionId],
        );
        return rows.map((r) => r.rid);
      },
    };
    await assertPagesExactlyOnce(db, items);
  });

  it("says each item's status and refusal, and is another tenant's 404", async () => {
    await db.pool.query("DELETE FROM bulk_actions");
    const actionId = await newAction(db, "acme");
    const [refused, applied] = await addItems(db, actionId, [new Date(), new Date()]);
    await db.pool.query("INSERT INTO bulk_action_items (action_id, seq, key) VALUES ($1::uuid, 3, 'stuck:pending')", [actionId]);
    const page = await listBulkItems(acme, actionId, { limit: 10 }, prisma);
    expect(page.items.map(({ key, status, error, seq }) => ({ key, status, error, seq }))).toEqual([
      { key: refused, status: "refused", error: "lease_alive", seq: 1 },
      { key: applied, status: "applied", error: null, seq: 2 },
      { key: "stuck:pending", status: "pending", error: null, seq: 3 },
    ]);
    expect(page.nextCursor).toBeNull();
    expect(page.items[2]?.doneAt).toBeNull();
    await expect(listBulkItems(Scope.ofPrincipal({ tenantId: "globex" }), actionId, { limit: 10 }, prisma)).rejects.toMatchObject(
      { code: "NOT_FOUND" },
    );
    // A cursor past the integer seq column is the end of the list, not a database error.
    const far = await listBulkItems(
      acme,
      actionId,
      { limit: 10, cursor: BULK_ITEM_KEYSET.encode(["9000000000000000000"]) },
      prisma,
    );
    expect(far.items).toEqual([]);
  });
});
