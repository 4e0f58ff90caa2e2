import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consoleRolePool, createTestDatabase, type TestDatabase } from "../../../test/database";
import { type AuditEntry, audit } from "../../auth/audit";
import { verifyAuditChain } from "../../auth/audit-chain";
import { Scope } from "../../auth/scope";
import { ensureEffectPartitions } from "../../db/partitions";
import { readEffect } from "./get-effect";
import { readSearch } from "./search-effects";

/**
 * A key lookup's and a search's audit row, written on PostgreSQL by the read's own last statement
 * (readEffect, readSearch):
 * the same row audit() writes, committed if and only if the read it records succeeded. Run as the
 * console's role, which may only insert into audit_log.
 */
const NOW = new Date("2026-11-20T12:00:00.000Z");
const COLUMNS = "token_id, actor, tenant_id, action, target, result, detail, ip";

describe("readEffect with its audit row", () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  const entry = (target: string): AuditEntry => ({
    principal: { tokenId: "6f1c2d3e-4a5b-4c6d-8e9f-a0b1c2d3e4f5", actor: "token:on-call", tenantId: null, role: "viewer" },
    action: "effect.read",
    tenantId: "acme",
    target,
    result: "ok",
    ip: "10.0.0.7",
  });
  const rowsFor = async (target: string) =>
    (await db.pool.query(`SELECT ${COLUMNS} FROM onceboard.audit_log WHERE target = $1 ORDER BY seq`, [target])).rows;

  beforeAll(async () => {
    db = await createTestDatabase();
    await ensureEffectPartitions(db.pool, { back: 3, ahead: 1, now: NOW });
    for (const key of ["capture:ord-1", "capture:ord-2", "capture:ord-3"]) {
      await db.pool.query(
        `INSERT INTO effects (tenant_id, key, job_type, status, policy, first_message_id, last_message_id, created_at, updated_at)
         VALUES ('acme', $1, 'capture', 'completed', 'external', 'm-1', 'm-1', $2, $2)`,
        [key, new Date(NOW.getTime() - 3_600_000)],
      );
    }
    pool = consoleRolePool(db, "audited-read-test");
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it("writes a found key's row with the read, once, the same row audit() writes", async () => {
    const read = await readEffect(
      Scope.operator(),
      { tenant: "acme", key: "capture:ord-1", now: NOW },
      pool,
      entry("capture:ord-1"),
    );
    expect(read.audited).toBe(true);
    expect(read.detail?.key).toBe("capture:ord-1");
    await audit(entry("capture:ord-1"), pool);
    const rows = await rowsFor("capture:ord-1");
    expect(rows).toHaveLength(2);
    expect(rows[0]).toEqual(rows[1]);
    expect((await verifyAuditChain(db.pool)).ok).toBe(true);
  });

  it("writes nothing for a missing key: the caller writes its not_found row", async () => {
    const read = await readEffect(
      Scope.operator(),
      { tenant: "acme", key: "capture:none", now: NOW },
      pool,
      entry("capture:none"),
    );
    expect(read).toEqual({ detail: null, audited: false });
    expect(await rowsFor("capture:none")).toEqual([]);
  });

  it("writes no row when the read it records fails", async () => {
    // The effect's row is found; the statement that reads its violations (and carries the audit row) then fails.
    await db.pool.query("ALTER TABLE onceboard.uncaught_violation_keys RENAME TO uncaught_violation_keys_away");
    try {
      await expect(
        readEffect(Scope.operator(), { tenant: "acme", key: "capture:ord-2", now: NOW }, pool, entry("capture:ord-2")),
      ).rejects.toThrow(/uncaught_violation_keys/);
    } finally {
      await db.pool.query("ALTER TABLE onceboard.uncaught_violation_keys_away RENAME TO uncaught_violation_keys");
    }
    expect(await rowsFor("capture:ord-2")).toEqual([]);
  });

  it("answers nothing when its audit row cannot be written", async () => {
    await db.pool.query(`
      CREATE FUNCTION onceboard.refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.target = 'capture:ord-3' THEN RAISE EXCEPTION 'audit refused'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER refuse_audit BEFORE INSERT ON onceboard.audit_log FOR EACH ROW EXECUTE FUNCTION onceboard.refuse_audit();`);
    try {
      await expect(
        readEffect(Scope.operator(), { tenant: "acme", key: "capture:ord-3", now: NOW }, pool, entry("capture:ord-3")),
      ).rejects.toThrow(/audit refused/);
    } finally {
      await db.pool.query("DROP TRIGGER refuse_audit ON onceboard.audit_log; DROP FUNCTION onceboard.refuse_audit()");
    }
    expect(await rowsFor("capture:ord-3")).toEqual([]);
  });

  const searchEntry = (q: string, detail: AuditEntry["detail"]): AuditEntry => ({
    ...entry(q),
    action: "effect.search",
    tenantId: null,
    detail,
  });

  it("writes a search's row with the search, its count from the page, as audit() writes it", async () => {
    for (const tenant of ["acme", null]) {
      const q = `ord-search-${tenant ?? "every"}`;
      const read = await readSearch(Scope.operator(), { tenant, q: "capture:ord", limit: 2, now: NOW }, pool, {
        ...searchEntry(q, { status: null, jobType: null }),
        tenantId: tenant,
      });
      expect(read.audited).toBe(true);
      // Three effects match; the page shows two (the third is the next page's).
      expect(read.response.effects).toHaveLength(2);
      expect(read.response.nextCursor).not.toBeNull();
      await audit({ ...searchEntry(q, { results: 2, status: null, jobType: null }), tenantId: tenant }, pool);
      const rows = await rowsFor(q);
      expect(rows).toHaveLength(2);
      expect(rows[0]).toEqual(rows[1]);
      expect(rows[0].detail).toEqual({ results: 2, status: null, jobType: null });
    }
    const none = await readSearch(Scope.operator(), { tenant: "acme", q: "nothing-like-it", limit: 2, now: NOW }, pool, {
      ...searchEntry("q-none", { status: "failed", jobType: null }),
    });
    expect(none.response.effects).toEqual([]);
    expect((await rowsFor("q-none"))[0]?.detail).toEqual({ results: 0, status: "failed", jobType: null });
    expect((await verifyAuditChain(db.pool)).ok).toBe(true);
  });

  it("writes no search row when the search fails, and answers no page when its row cannot be written", async () => {
    await db.pool.query("ALTER TABLE onceboard.effects RENAME TO effects_away");
    try {
      await expect(
        readSearch(Scope.operator(), { tenant: "acme", q: "capture", limit: 2, now: NOW }, pool, searchEntry("q-fails", {})),
      ).rejects.toThrow(/effects/);
    } finally {
      await db.pool.query("ALTER TABLE onceboard.effects_away RENAME TO effects");
    }
    expect(await rowsFor("q-fails")).toEqual([]);
    await db.pool.query(`
      CREATE FUNCTION onceboard.refuse_search_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.target = 'q-refused' THEN RAISE EXCEPTION 'audit refused'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER refuse_search_audit BEFORE INSERT ON onceboard.audit_log FOR EACH ROW EXECUTE FUNCTION onceboard.refuse_search_audit();`);
    try {
      for (const tenant of ["acme", null])
        await expect(
          readSearch(Scope.operator(), { tenant, q: "capture", limit: 2, now: NOW }, pool, searchEntry("q-refused", {})),
        ).rejects.toThrow(/audit refused/);
    } finally {
      await db.pool.query(
        "DROP TRIGGER refuse_search_audit ON onceboard.audit_log; DROP FUNCTION onceboard.refuse_search_audit()",
      );
    }
  });
});
