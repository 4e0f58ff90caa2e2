import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { Scope } from "../auth/scope";
import { ensureEffectPartitions } from "../db/partitions";
import { searchEffects } from "../features/keys-and-effects/search-effects";
import { listFindings } from "../features/reconciliation/list-findings";
import { listReconciliationRuns } from "../features/reconciliation/list-reconciliation-runs";
import { listViolations } from "../features/violations/list-violations";
import { assertPagesExactlyOnce, type ListUnderTest } from "./testing/keyset-property";

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
      // The opaque cursor still bounds its numeric part: past bigint the cast would fail in SQL.
      Buffer.from('["runs","2026-01-01T00:00:00.000000Z","9999999999999999999"]').toString("base64url"),
      findingsCursor,
    ]) {
      await expect(runs.page(db, 1, bad)).rejects.toMatchObject({ code: "INVALID_INPUT", message: /cursor/ });
    }
    await expect(findings.page(db, 1, runsCursor)).rejects.toMatchObject({ code: "INVALID_INPUT", message: /cursor/ });
    await expect(violations.page(db, 1, runsCursor)).rejects.toMatchObject({ code: "INVALID_INPUT", message: /cursor/ });
    await expect(keysOfOneTenant.page(db, 1, runsCursor)).rejects.toMatchObject({ code: "INVALID_INPUT", message: /cursor/ });
  });
});
