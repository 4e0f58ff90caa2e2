import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { CLAIM } from "../claim-sql";
import { COMPLETE, COMPLETE_BATCH, EXTEND_LEASE, FAIL, FAIL_BATCH } from "../complete-sql";
import { APPLY_DUPLICATES } from "../duplicates";

/**
 * What docs/scaling.md relies on to distribute `effects` by tenant_id (Citus), checked without
 * Citus: every unique index on effects leads with tenant_id (a distributed unique index must
 * contain the distribution column), and every claim-path statement on effects names the tenant
 * and joins nothing across tenants (so Citus routes it to the one shard holding the tenant).
 */

/** The statements of a plpgsql body or of a statement constant that read or write effects. */
function effectsStatements(sql: string): string[] {
  // The library names its schema (onceboard.effects); the scope rules are about the table.
  const withoutComments = sql.replace(/--[^\n]*/g, "").replace(/\bonceboard\.effects\b/g, "effects");
  // A plpgsql loop's header (FOR … IN SELECT … LOOP) is not part of the statement it runs. A
  // statement that only reads back what its own UPDATE returned (WITH applied AS (UPDATE … RETURNING
  // …) SELECT … FROM applied) is checked as that UPDATE: the outer SELECT reads no table.
  return withoutComments
    .split(/;|\bLOOP\b/i)
    .map((s) => s.replace(/\s+/g, " ").trim())
    .map((s) => /^WITH (\w+) AS \( ?(UPDATE .*? RETURNING [^()]*)\) SELECT .* FROM \1(?: \w+)?$/i.exec(s)?.[2] ?? s)
    .filter((s) => /\b(FROM|UPDATE|INTO)\s+effects\b/i.test(s));
}

/** Why a statement on effects would not stay on one tenant's shard ([] when it would). */
function tenantScopeProblems(statement: string): string[] {
  const problems: string[] = [];
  const s = statement.replace(/\s+/g, " ");
  if (/\bJOIN\b/i.test(s)) problems.push("joins another relation");
  const refs = s.match(/\b(FROM|UPDATE|INTO|JOIN|,)\s+effects\b/gi) ?? [];
  if (refs.length !== 1) problems.push(`names effects ${refs.length} times (a self-join crosses rows of other tenants)`);
  if (/\bINSERT\s+INTO\s+effects\b/i.test(s)) {
    if (!/INSERT\s+INTO\s+effects\s*\([^)]*\btenant_id\b/i.test(s)) problems.push("inserts without tenant_id");
  } else {
    // The row's tenant must equal one value: a parameter, a plpgsql argument, or the joined
    // recordset row's own tenant (a per-row equality, which stays within each tenant).
    const eq = /\b(?:\w+\.)?tenant_id\s*=\s*(\$\d+(?:::text)?|p_tenant\b|\w+\.tenant_id\b)/i;
    if (!eq.test(s.split(/\bWHERE\b/i)[1] ?? "")) problems.push("has no WHERE tenant_id = <one tenant>");
    // Innermost parentheses first; a derived table over the recordset alone (sorted, say) counts as
    // the recordset, so it stays within each row's tenant as the recordset does.
    let flat = s;
    while (/\([^()]*\)/.test(flat)) {
      flat = flat.replace(/\([^()]*\)/g, (group) =>
        /^\(\s*SELECT\b[^()]*?\bFROM\s+(?:jsonb_to_recordset|unnest)<>(?:\s+AS\s+\w+<>)?(?:\s+ORDER BY\s+[\w.,\s]+)?\s*\)$/i.test(
          group,
        )
          ? "unnest<>"
          : "<>",
      );
    }
    const from = flat.match(/\bFROM\s+([\s\S]*?)(\bWHERE\b|$)/i)?.[1] ?? "";
    const others = from
      .split(",")
      .map((t) => t.trim())
      .filter((t) => t && !/^effects\b/i.test(t) && !/^(jsonb_to_recordset|unnest)<>/i.test(t));
    if (others.length > 0) problems.push(`reads another relation: ${others.join(", ")}`);
  }
  return problems;
}

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 2 });
});
afterAll(async () => {
  await db?.drop();
});

describe("tenant scope of the claim path (what Citus distribution needs)", () => {
  it("every unique index on effects and on each of its partitions leads with tenant_id", async () => {
    const { rows } = await db.pool.query<{ index: string; cols: string[] }>(`
      SELECT i.indexrelid::regclass::text AS index,
             array(SELECT a.attname FROM unnest(i.indkey) WITH ORDINALITY k(attnum, n)
                     JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS cols
        FROM pg_index i
       WHERE i.indisunique
         AND (i.indrelid = 'effects'::regclass
              OR i.indrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'effects'::regclass))`);
    expect(rows.length).toBeGreaterThan(0); // the template has partitions, each with its unique index
    for (const row of rows) expect({ index: row.index, first: row.cols[0] }).toEqual({ index: row.index, first: "tenant_id" });
  });

  // The functions the library calls on effects, and how many statements on effects each has at least.
  const FUNCTIONS: Record<string, number> = {
    onceboard_claim: 3, // the look, the insert, the takeovers
    onceboard_complete_batch: 1,
    onceboard_fail_batch: 1,
    onceboard_apply_duplicates: 1,
  };

  it("every statement of the library's functions on effects names one tenant and joins nothing", async () => {
    for (const [name, least] of Object.entries(FUNCTIONS)) {
      const { rows } = await db.pool.query<{ def: string }>(
        "SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p WHERE p.proname = $1",
        [name],
      );
      expect(rows.length, name).toBeGreaterThan(0);
      for (const { def } of rows) {
        const statements = effectsStatements(def);
        expect(statements.length, name).toBeGreaterThanOrEqual(least);
        for (const statement of statements)
          expect({ name, statement, problems: tenantScopeProblems(statement) }).toEqual({ name, statement, problems: [] });
      }
    }
  });

  it("every statement the library sends on effects names one tenant and joins nothing", () => {
    for (const { name, text } of [COMPLETE, FAIL, EXTEND_LEASE]) {
      const statements = effectsStatements(text);
      expect(statements, name).toHaveLength(1);
      expect({ name, problems: tenantScopeProblems(statements[0] ?? "") }).toEqual({ name, problems: [] });
    }
    // The rest are one call each of a function checked above, its tenants its first argument.
    expect(CLAIM.text).toMatch(/FROM onceboard\.onceboard_claim\(\$1::text/);
    expect(COMPLETE_BATCH.text).toMatch(/FROM onceboard\.onceboard_complete_batch\(\$1::text\[\]/);
    expect(FAIL_BATCH.text).toMatch(/FROM onceboard\.onceboard_fail_batch\(\$1::text\[\]/);
    expect(APPLY_DUPLICATES.text).toMatch(/onceboard\.onceboard_apply_duplicates\(\$1::jsonb\)/);
  });

  it("the check fails on statements that would leave the tenant's shard", () => {
    expect(tenantScopeProblems("SELECT f.status FROM effects f WHERE f.key = p_key")).toContain(
      "has no WHERE tenant_id = <one tenant>",
    );
    expect(tenantScopeProblems("SELECT 1 FROM effects a JOIN effects b ON a.key = b.key WHERE a.tenant_id = $1")).toContain(
      "joins another relation",
    );
    expect(
      tenantScopeProblems("SELECT 1 FROM effects f, api_tokens t WHERE f.tenant_id = $1 AND t.tenant_id = f.tenant_id"),
    ).toEqual(["reads another relation: api_tokens t"]);
    expect(
      tenantScopeProblems(
        "UPDATE effects e SET status = 'failed' FROM (SELECT * FROM api_tokens t ORDER BY t.id) c WHERE e.tenant_id = c.tenant_id",
      ),
    ).toEqual(["reads another relation: <> c"]);
    expect(
      tenantScopeProblems(
        "UPDATE effects e SET status = 'failed' FROM (SELECT * FROM unnest(p_tenants, p_keys) AS u(tenant_id, key) ORDER BY u.tenant_id, u.key) c WHERE e.tenant_id = c.tenant_id AND e.key = c.key",
      ),
    ).toEqual([]);
    expect(tenantScopeProblems("INSERT INTO effects (key, job_type) VALUES ($1, $2)")).toContain("inserts without tenant_id");
    expect(tenantScopeProblems("UPDATE effects SET status = 'failed' WHERE tenant_id IN ($1, $2)")).toContain(
      "has no WHERE tenant_id = <one tenant>",
    );
  });
});
