import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { Scope } from "../auth/scope";
import { ensureEffectPartitions } from "../db/partitions";
import { listFindings } from "./list-findings";
import { listReconciliationRuns } from "./list-reconciliation-runs";
import { listViolations } from "./list-violations";
import { searchEffects } from "./search-effects";

/**
 * Every list of the console, walked page by page as a user (or a script with ?cursor=) would: N
 * rows with deliberately equal times (a handful of distinct instants), any page size, and rows
 * inserted between pages, at the same instants. Every row present at the start is returned
 * exactly once, and the pages read in the list's declared order, which the test states itself
 * in SQL over the typed columns (the oracle), not through the list's own code.
 */
const NOW = new Date();
const platform = Scope.ofPrincipal({ tenantId: null });
const acme = Scope.ofPrincipal({ tenantId: "acme" });

/** One list under test: how to seed a row at a time, read a page, and say the declared order. */
export interface ListUnderTest {
  reset(db: TestDatabase): Promise<void>;
  /** Inserts one row per time; returns their ids as the list names them. */
  insert(db: TestDatabase, times: Date[]): Promise<string[]>;
  page(db: TestDatabase, limit: number, cursor: string | undefined): Promise<{ ids: string[]; nextCursor: string | null }>;
  /** Every row's id in the declared order, as the oracle's SQL sorts them. */
  declaredOrder(db: TestDatabase): Promise<string[]>;
}

const walkCase = fc.record({
  rows: fc.integer({ min: 1, max: 40 }),
  instants: fc.integer({ min: 1, max: 4 }),
  pageSize: fc.integer({ min: 1, max: 15 }),
  insertedPerPage: fc.integer({ min: 0, max: 3 }),
  seed: fc.integer(),
});

/** Runs the property for one list; fast-check shrinks a failure to the smallest case. */
export async function assertPagesExactlyOnce(db: TestDatabase, list: ListUnderTest, numRuns = 12): Promise<void> {
  await fc.assert(
    fc.asyncProperty(walkCase, async ({ rows, instants, pageSize, insertedPerPage, seed }) => {
      await list.reset(db);
      // Whole milliseconds an hour ago: every list shows its times to the millisecond.
      const base = Math.floor(NOW.getTime() / 1000) * 1000 - 3_600_000;
      const instant = (i: number) => new Date(base + (Math.abs(seed + i * 7919) % instants) * 1000);
      const atStart = await list.insert(
        db,
        Array.from({ length: rows }, (_, i) => instant(i)),
      );
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      let inserted = 0;
      do {
        const page = await list.page(db, pageSize, cursor);
        seen.push(...page.ids);
        cursor = page.nextCursor ?? undefined;
        // Rows written while the user reads, at the very instants being paged through (some
        // land behind the cursor and are read too): as many as there were rows, so the walk ends.
        const inserting = Math.min(insertedPerPage, rows - inserted);
        if (inserting > 0) {
          await list.insert(
            db,
            Array.from({ length: inserting }, (_, i) => instant(pages * 31 + i)),
          );
          inserted += inserting;
        }
        pages++;
        if (pages > 2 * rows + 2) throw new Error("the pages never end");
      } while (cursor);
      // Never a row twice.
      expect(new Set(seen).size, `a row repeated: ${seen.join(",")}`).toBe(seen.length);
      // Every row present at the start, once.
      const missing = atStart.filter((id) => !seen.includes(id));
      expect(missing, `${missing.length} of ${rows} rows never reached`).toEqual([]);
      // In the declared order.
      const order = await list.declaredOrder(db);
      const position = new Map(order.map((id, i) => [id, i]));
      const positions = seen.map((id) => position.get(id) ?? -1);
      expect(
        positions.every((p, i) => i === 0 || p > (positions[i - 1] ?? -1)),
        "pages out of the declared order",
      ).toBe(true);
    }),
    { numRuns },
  );
}

const runs: ListUnderTest = {
  async reset(db) {
    await db.pool.query("TRUNCATE reconciliation_runs CASCADE");
    // Ids past 9 from the first case: where a text order (9 > 10) and a numeric one part.
    await db.pool.query("SELECT setval(pg_get_serial_sequence('reconciliation_runs', 'id'), 7)");
  },
  async insert(db, times) {
    const { rows } = await db.pool.query<{ id: string }>(
      `INSERT INTO reconciliation_runs (provider, window_from, window_to, grace_seconds, status, trigger, started_at)
       SELECT 'stripe', t - interval '1 hour', t, 0, 'completed', 'schedule', t FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(t, n)
        ORDER BY n RETURNING id::text AS id`,
      [times],
    );
    return rows.map((r) => r.id);
  },
  async page(db, limit, cursor) {
    const list = await listReconciliationRuns(platform, { limit, cursor, now: NOW }, db.pool);
    return { ids: list.runs.map((r) => r.id), nextCursor: list.nextCursor };
  },
  async declaredOrder(db) {
    const { rows } = await db.pool.query<{ rid: string }>(
      "SELECT id::text AS rid FROM reconciliation_runs ORDER BY started_at DESC, id DESC",
    );
    return rows.map((r) => r.rid);
  },
};

const findings: ListUnderTest = {
  async reset(db) {
    await db.pool.query("TRUNCATE reconciliation_findings");
    await db.pool.query("SELECT setval(pg_get_serial_sequence('reconciliation_findings', 'id'), 7)");
  },
  async insert(db, times) {
    const { rows } = await db.pool.query<{ id: string }>(
      `INSERT INTO reconciliation_findings (identity, provider, kind, tenant_id, detail, first_seen_at, last_seen_at)
       SELECT gen_random_uuid()::text, 'stripe', 'drift', 'acme', 'amount differs', t, t
         FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(t, n) ORDER BY n
       RETURNING id::text AS id`,
      [times],
    );
    return rows.map((r) => r.id);
  },
  async page(db, limit, cursor) {
    const list = await listFindings(platform, { state: "open", limit, cursor }, db.pool);
    return { ids: list.findings.map((f) => f.id), nextCursor: list.nextCursor };
  },
  async declaredOrder(db) {
    const { rows } = await db.pool.query<{ rid: string }>(
      "SELECT id::text AS rid FROM reconciliation_findings ORDER BY last_seen_at DESC, id DESC",
    );
    return rows.map((r) => r.rid);
  },
};

const violations: ListUnderTest = {
  async reset(db) {
    await db.pool.query("TRUNCATE uncaught_violation_keys");
  },
  async insert(db, times) {
    const { rows } = await db.pool.query<{ id: string }>(
      `INSERT INTO uncaught_violation_keys (id, occurred_at, tenant_id, job_type, constraint_name, key)
       SELECT gen_random_uuid(), t, 'acme', 'invoice.send', 'invoices_number_key', 'invoice:' || n
         FROM unnest($1::timestamptz[]) WITH ORDINALITY AS u(t, n) ORDER BY n
       RETURNING id::text AS id`,
      [times],
    );
    return rows.map((r) => r.id);
  },
  async page(db, limit, cursor) {
    const list = await listViolations(platform, { limit, cursor, now: NOW }, db.pool);
    return { ids: list.violations.map((v) => v.id), nextCursor: list.nextCursor };
  },
  async declaredOrder(db) {
    const { rows } = await db.pool.query<{ rid: string }>(
      "SELECT id::text AS rid FROM uncaught_violation_keys ORDER BY occurred_at DESC, seq DESC",
    );
    return rows.map((r) => r.rid);
  },
};

let effectKeys = 0;
/** Keys whose text order is not their insertion order, sharing prefixes. */
const effectKey = () => {
  effectKeys++;
  return `capture:inv-${(effectKeys * 7919) % 1000}-${effectKeys}`;
};

const keysOfOneTenant: ListUnderTest = {
  async reset(db) {
    await db.pool.query("DELETE FROM effects");
  },
  async insert(db, times) {
    const keys = times.map(() => effectKey());
    // Two tenants: the tenant's search must page through its own rows alone.
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, created_at, updated_at)
       SELECT tenant, k, 'invoice.send', 'completed', 'external', t, t
         FROM unnest($1::text[], $2::timestamptz[]) AS u(k, t), unnest(ARRAY['acme', 'globex']) AS tenant`,
      [keys, times],
    );
    return keys.map((k) => `acme/${k}`);
  },
  async page(db, limit, cursor) {
    const list = await searchEffects(acme, { limit, cursor, now: NOW }, db.pool);
    return { ids: list.effects.map((e) => `${e.tenant}/${e.key}`), nextCursor: list.nextCursor };
  },
  async declaredOrder(db) {
    const { rows } = await db.pool.query<{ rid: string }>(
      "SELECT tenant_id || '/' || key AS rid FROM effects WHERE tenant_id = 'acme' ORDER BY created_at DESC, key DESC",
    );
    return rows.map((r) => r.rid);
  },
};

const keysOfEveryTenant: ListUnderTest = {
  ...keysOfOneTenant,
  async insert(db, times) {
    const keys = times.map(() => effectKey());
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, created_at, updated_at)
       SELECT tenant, k, 'invoice.send', 'completed', 'external', t, t
         FROM unnest($1::text[], $2::timestamptz[]) AS u(k, t), unnest(ARRAY['acme', 'globex']) AS tenant`,
      [keys, times],
    );
    return keys.flatMap((k) => [`acme/${k}`, `globex/${k}`]);
  },
  async page(db, limit, cursor) {
    const list = await searchEffects(platform, { limit, cursor, now: NOW }, db.pool);
    return { ids: list.effects.map((e) => `${e.tenant}/${e.key}`), nextCursor: list.nextCursor };
  },
  async declaredOrder(db) {
    const { rows } = await db.pool.query<{ rid: string }>(
      "SELECT tenant_id || '/' || key AS rid FROM effects ORDER BY created_at DESC, tenant_id DESC, key DESC",
    );
    return rows.map((r) => r.rid);
  },
};

describe("keyset pages: every row present at the start exactly once, in the declared order", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await ensureEffectPartitions(db.pool, { back: 1, ahead: 1, now: NOW });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("reconciliation runs: newest started first, then the newest id (a number: 10 after 9)", async () => {
    await assertPagesExactlyOnce(db, runs);
  });
  it("reconciliation findings: newest last seen first, then the newest id, a run's findings sharing one instant", async () => {
    await assertPagesExactlyOnce(db, findings);
  });
  it("uncaught violations: newest first, then the newest seq", async () => {
    await assertPagesExactlyOnce(db, violations);
  });
  it("keys of one tenant: newest created first, then the key", async () => {
    await assertPagesExactlyOnce(db, keysOfOneTenant);
  });
  it("keys of every tenant: newest created first, then tenant, then key", async () => {
    await assertPagesExactlyOnce(db, keysOfEveryTenant);
  });

  it("a cursor this list never returned, or another list's, is a 400 naming the cursor", async () => {
    await findings.reset(db);
    await runs.reset(db);
    await runs.insert(db, [NOW, NOW, NOW]);
    await findings.insert(db, [NOW, NOW, NOW]);
    const runsCursor = (await runs.page(db, 1, undefined)).nextCursor as string;
    const findingsCursor = (await findings.page(db, 1, undefined)).nextCursor as string;
    expect(runsCursor).toBeTruthy();
    for (const bad of [
      "x",
      "bm90LWEtY3Vyc29y",
      Buffer.from('["findings","2026-02-31T00:00:00.000000Z","1"]').toString("base64url"),
      findingsCursor,
    ]) {
      await expect(runs.page(db, 1, bad)).rejects.toMatchObject({ code: "INVALID_INPUT", message: /cursor/ });
    }
    await expect(findings.page(db, 1, runsCursor)).rejects.toMatchObject({ code: "INVALID_INPUT", message: /cursor/ });
    await expect(violations.page(db, 1, runsCursor)).rejects.toMatchObject({ code: "INVALID_INPUT", message: /cursor/ });
    await expect(keysOfOneTenant.page(db, 1, runsCursor)).rejects.toMatchObject({ code: "INVALID_INPUT", message: /cursor/ });
  });
});
