import { afterAll, beforeAll, describe, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { Scope } from "../../auth/scope";
import { assertPagesExactlyOnce, type ListUnderTest } from "../../console/testing/keyset-property";
import { createPrismaClient, type PrismaClient } from "../../db/prisma";
import { listAudit } from "../audit/list-audit";
import { listLiveSessions } from "./session-admin";
import { listScopedTokens } from "./token-admin";

/**
 * The admin lists (tokens, live sessions, the audit log) held to the keyset property of every list
 * (lib/console/testing/keyset-property.ts): rows made at one instant, any page size, rows added
 * while paging — every row present at the start read once, newest made first.
 */
const platform = Scope.ofPrincipal({ tenantId: null });

describe("admin lists: keyset pages", () => {
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

  it("tokens: newest made first (seq), equal created_at included", async () => {
    const tokens: ListUnderTest = {
      async reset(db) {
        await db.pool.query("DELETE FROM api_tokens");
      },
      async insert(db, times) {
        const { rows } = await db.pool.query<{ id: string }>(
          `INSERT INTO api_tokens (name, role, token_hash, prefix, created_at)
           SELECT 'worker-' || n, 'viewer', gen_random_uuid()::text, 'ob_' || n, t
             FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(t, n) ORDER BY n RETURNING id::text AS id`,
          [times],
        );
        return rows.map((r) => r.id);
      },
      async page(_db, limit, cursor) {
        const page = await listScopedTokens(platform, { limit, cursor }, prisma);
        return { ids: page.tokens.map((t) => t.id), nextCursor: page.nextCursor };
      },
      async declaredOrder(db) {
        const { rows } = await db.pool.query<{ rid: string }>("SELECT id::text AS rid FROM api_tokens ORDER BY seq DESC");
        return rows.map((r) => r.rid);
      },
    };
    await assertPagesExactlyOnce(db, tokens);
  });

  it("live sessions: newest signed in first (seq), whatever their last seen does", async () => {
    const sessions: ListUnderTest = {
      async reset(db) {
        await db.pool.query("DELETE FROM api_tokens");
        await db.pool.query(
          "INSERT INTO api_tokens (name, role, token_hash, prefix) VALUES ('person', 'admin', 'h-person', 'ob_person')",
        );
      },
      async insert(db, times) {
        const { rows } = await db.pool.query<{ id: string }>(
          `INSERT INTO console_sessions (id_hash, token_id, created_at, last_seen_at, expires_at, signed_in_with)
           SELECT gen_random_uuid()::text, (SELECT id FROM api_tokens WHERE name = 'person'), t, now(), now() + interval '1 day', 'token'
             FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(t, n) ORDER BY n RETURNING public_id::text AS id`,
          [times],
        );
        // Sessions in use while the list is read: last seen moves, the order does not.
        await db.pool.query("UPDATE console_sessions SET last_seen_at = clock_timestamp()");
        return rows.map((r) => r.id);
      },
      async page(_db, limit, cursor) {
        const page = await listLiveSessions(platform, { limit, cursor }, prisma);
        return { ids: page.sessions.map((s) => s.id), nextCursor: page.nextCursor };
      },
      async declaredOrder(db) {
        const { rows } = await db.pool.query<{ rid: string }>(
          "SELECT public_id::text AS rid FROM console_sessions ORDER BY seq DESC",
        );
        return rows.map((r) => r.rid);
      },
    };
    await assertPagesExactlyOnce(db, sessions);
  });

  it("audit log: newest first (id, drawn with its time under the chain's lock)", async () => {
    // Append-only: each case writes its own action, and the list is filtered to it.
    let action = "";
    let cases = 0;
    const audit: ListUnderTest = {
      async reset() {
        action = `keyset.case${++cases}`;
      },
      async insert(db, times) {
        const { rows } = await db.pool.query<{ id: string }>(
          `INSERT INTO audit_log (actor, action, target) SELECT 'tester', $2, 'row-' || n
             FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(t, n) ORDER BY n RETURNING id::text AS id`,
          [times, action],
        );
        return rows.map((r) => r.id);
      },
      async page(_db, limit, cursor) {
        const page = await listAudit(platform, { action, limit, cursor }, prisma);
        return { ids: page.entries.map((e) => e.id), nextCursor: page.nextCursor };
      },
      async declaredOrder(db) {
        const { rows } = await db.pool.query<{ rid: string }>(
          "SELECT id::text AS rid FROM audit_log WHERE action = $1 ORDER BY at DESC, id DESC",
          [action],
        );
        return rows.map((r) => r.rid);
      },
    };
    await assertPagesExactlyOnce(db, audit);
  });
});
