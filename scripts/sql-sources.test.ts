import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LIBRARY_MIGRATIONS_DIR, readLibraryMigrations } from "../lib/idempotency/admin";
import { createTestDatabase, type TestDatabase } from "../test/database";
import { CONSOLE_SQL_SOURCES_DIR, readSqlSources, SQL_SOURCES_DIR, stampMigration } from "./sql-sources";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 2 });
});
afterAll(async () => {
  await db?.drop();
});

async function functionDef(name: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ def: string }>(
    "SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.proname = $1 AND n.nspname NOT IN ('pg_catalog', 'information_schema') ORDER BY p.oid",
    [name],
  );
  return rows.map((r) => r.def);
}

/** What the database would define if `sql` were run (in a transaction rolled back afterwards). */
async function definedBy(name: string, sql: string): Promise<string[]> {
  const client = await db.pool.connect();
  try {
    await client.query("BEGIN");
    await client.query(sql);
    const { rows } = await client.query<{ def: string }>(
      "SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.proname = $1 AND n.nspname NOT IN ('pg_catalog', 'information_schema') ORDER BY p.oid",
      [name],
    );
    return rows.map((r) => r.def);
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
}

describe("SQL function sources (lib/idempotency/sql)", () => {
  it("the migrated database defines each function exactly as its source file does", async () => {
    const sources = [...(await readSqlSources()), ...(await readSqlSources(CONSOLE_SQL_SOURCES_DIR))];
    expect(sources.map((s) => s.name)).toContain("onceboard_claim");
    expect(sources.map((s) => s.name)).toContain("onceboard_audit_log_append_only");
    for (const source of sources) {
      const migrated = await functionDef(source.name);
      expect(migrated, `${source.name} is not defined by the migrations`).toHaveLength(1);
      expect(
        await definedBy(source.name, source.text),
        `${source.name}.sql differs from the migrations: npm run db:stamp`,
      ).toEqual(migrated);
    }
  });

  it("every onceboard_* function in the database has a source file", async () => {
    const { rows } = await db.pool.query<{ name: string }>(
      "SELECT DISTINCT p.proname AS name FROM pg_proc p WHERE p.proname LIKE 'onceboard\\_%' ORDER BY 1",
    );
    const sources = [...(await readSqlSources()), ...(await readSqlSources(CONSOLE_SQL_SOURCES_DIR))].map((s) => s.name);
    expect(rows.map((r) => r.name).filter((n) => !sources.includes(n))).toEqual([]);
  });

  it("an edited source no longer matches (the comparison can fail)", async () => {
    const claim = (await readSqlSources()).find((s) => s.name === "onceboard_claim");
    const edited = claim?.text.replace("r.result := 'in_flight';", "r.result := 'in_flight'; -- edited") ?? "";
    expect(edited).not.toBe(claim?.text);
    expect(await definedBy("onceboard_claim", edited)).not.toEqual(await functionDef("onceboard_claim"));
  });
});

describe("npm run db:stamp", () => {
  const tmp: string[] = [];
  afterAll(() => Promise.all(tmp.map((d) => fs.rm(d, { recursive: true, force: true }))));

  async function scratch() {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), "onceboard-stamp-"));
    tmp.push(root);
    const sourcesDir = path.join(root, "sql");
    const migrationsDir = path.join(root, "migrations");
    await fs.cp(SQL_SOURCES_DIR, sourcesDir, { recursive: true });
    await fs.cp(LIBRARY_MIGRATIONS_DIR, migrationsDir, { recursive: true });
    return { sourcesDir, migrationsDir };
  }

  it("stamps only the edited function, after the latest migration, and then nothing is left to stamp", async () => {
    const dirs = await scratch();
    await expect(stampMigration({ name: "noop", ...dirs })).rejects.toThrow(/nothing to stamp/);
    const source = path.join(dirs.sourcesDir, "onceboard_add_counts.sql");
    await fs.writeFile(source, (await fs.readFile(source, "utf8")).replace("AS i", "AS i -- edited"));
    // After the latest version, not after the count: numbers can have gaps while branches land.
    const next = String((readLibraryMigrations(dirs.migrationsDir).at(-1)?.version ?? 0) + 1).padStart(4, "0");
    const { file, functions } = await stampMigration({ name: "add_counts", note: "why: a test", ...dirs });
    expect(functions).toEqual(["onceboard_add_counts"]);
    expect(path.basename(file)).toBe(`${next}_add_counts.sql`);
    const sql = await fs.readFile(file, "utf8");
    expect(sql).toMatch(/^-- why: a test\n/);
    expect(sql).toContain("AS i -- edited");
    expect(sql).not.toContain("onceboard_claim(");
    await expect(stampMigration({ name: "again", ...dirs })).rejects.toThrow(/nothing to stamp/);
  });
});
