import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { DEFAULT_MIGRATIONS_DIR, MigrationError, migrate, readMigrations } from "./migrate";
import { createScratchDatabase, type ScratchDatabase } from "./scratch";

/** An empty database (not cloned from the template) to migrate from scratch. */
function emptyDatabase(base: TestDatabase): Promise<ScratchDatabase> {
  return createScratchDatabase(base.url, { name: `${base.name}_empty` });
}

async function copyMigrations(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "onceboard-migrations-"));
  await fs.cp(DEFAULT_MIGRATIONS_DIR, dir, { recursive: true });
  return dir;
}

describe("migration applier", () => {
  let base: TestDatabase;
  beforeAll(async () => {
    base = await createTestDatabase();
  });
  afterAll(async () => {
    await base.drop();
  });

  it("applies each migration once when two appliers start together", async () => {
    const db = await emptyDatabase(base);
    try {
      const results = await Promise.all([migrate(db.url), migrate(db.url), migrate(db.url)]);
      const migrations = await readMigrations();
      const appliedCounts = results.map((r) => r.applied.length);
      expect(appliedCounts.reduce((a, b) => a + b, 0)).toBe(migrations.length);
      expect(appliedCounts.filter((n) => n > 0)).toHaveLength(1);
      const client = new pg.Client(db.url);
      await client.connect();
      const { rows } = await client.query(`SELECT migration_name, count(*)::int AS n FROM _prisma_migrations GROUP BY 1`);
      await client.end();
      expect(rows).toHaveLength(migrations.length);
      for (const row of rows) expect(row.n).toBe(1);
    } finally {
      await db.drop();
    }
  });

  it("records rows in Prisma Migrate's format", async () => {
    const { rows } = await base.pool.query(`SELECT * FROM _prisma_migrations ORDER BY migration_name`);
    const { rows: columns } = await base.pool.query(
      `SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
    );
    expect(columns.map((c) => c.column_name)).toEqual([
      "id",
      "checksum",
      "finished_at",
      "migration_name",
      "logs",
      "rolled_back_at",
      "started_at",
      "applied_steps_count",
    ]);
    const migrations = await readMigrations();
    expect(rows.map((r) => r.migration_name)).toEqual(migrations.map((m) => m.name));
    for (const [i, row] of rows.entries()) {
      const bytes = await fs.readFile(migrations[i]!.file);
      expect(row.checksum).toBe(createHash("sha256").update(bytes).digest("hex"));
      expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.rolled_back_at).toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }
  });

  it("refuses a migration edited after it was applied, naming the file", async () => {
    const db = await emptyDatabase(base);
    const dir = await copyMigrations();
    try {
      await migrate(db.url, { dir });
      const [first] = await readMigrations(dir);
      await fs.appendFile(first!.file, "\n-- edited\n");
      const attempt = migrate(db.url, { dir });
      await expect(attempt).rejects.toBeInstanceOf(MigrationError);
      await expect(migrate(db.url, { dir })).rejects.toThrow(new RegExp(`${first!.name}/migration.sql was edited`));
    } finally {
      await db.drop();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it("rolls back a failing migration and names it", async () => {
    const db = await emptyDatabase(base);
    const dir = await copyMigrations();
    try {
      const broken = path.join(dir, "29991231000000_broken");
      await fs.mkdir(broken);
      await fs.writeFile(path.join(broken, "migration.sql"), "CREATE TABLE half_done (id int);\nSELECT no_such_function();\n");
      await expect(migrate(db.url, { dir })).rejects.toThrow(/29991231000000_broken\/migration.sql failed/);
      const client = new pg.Client(db.url);
      await client.connect();
      const { rows } = await client.query(`SELECT to_regclass('half_done') AS t`);
      const recorded = await client.query(`SELECT 1 FROM _prisma_migrations WHERE migration_name = '29991231000000_broken'`);
      await client.end();
      expect(rows[0].t).toBeNull();
      expect(recorded.rowCount).toBe(0);
    } finally {
      await db.drop();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
