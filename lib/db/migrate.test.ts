import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import {
  DEFAULT_MIGRATIONS_DIR,
  LEGACY_MIGRATIONS_DIR,
  MigrationError,
  migrateConsole,
  RENAMED_MIGRATIONS,
  readMigrations,
} from "./migrate";
import { createScratchDatabase, type ScratchDatabase } from "./scratch";

/** An empty database (not cloned from the template) to migrate from scratch. */
/** The console chain's names in a result (the library's migrate() reports its own as `library …`). */
const consoleOnly = (names: string[]) => names.filter((n) => !n.startsWith("library "));

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
      const results = await Promise.all([migrateConsole(db.url), migrateConsole(db.url), migrateConsole(db.url)]);
      const migrations = await readMigrations();
      const appliedCounts = results.map((r) => consoleOnly(r.applied).length);
      expect(appliedCounts.reduce((a, b) => a + b, 0)).toBe(migrations.length);
      expect(appliedCounts.filter((n) => n > 0)).toHaveLength(1);
      const client = new pg.Client(db.url);
      await client.connect();
      const { rows } = await client.query(
        `SELECT migration_name, count(*)::int AS n FROM onceboard._prisma_migrations GROUP BY 1`,
      );
      await client.end();
      expect(rows).toHaveLength(migrations.length);
      for (const row of rows) expect(row.n).toBe(1);
    } finally {
      await db.drop();
    }
  });

  it("records rows in Prisma Migrate's format", async () => {
    const { rows } = await base.pool.query(`SELECT * FROM onceboard._prisma_migrations ORDER BY migration_name`);
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
      await migrateConsole(db.url, { dir });
      const [first] = await readMigrations(dir);
      await fs.appendFile(first!.file, "\n-- edited\n");
      const attempt = migrateConsole(db.url, { dir });
      await expect(attempt).rejects.toBeInstanceOf(MigrationError);
      await expect(migrateConsole(db.url, { dir })).rejects.toThrow(new RegExp(`${first!.name}/migration.sql was edited`));
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
      await expect(migrateConsole(db.url, { dir })).rejects.toThrow(/29991231000000_broken\/migration.sql failed/);
      const client = new pg.Client(db.url);
      await client.connect();
      const { rows } = await client.query(`SELECT to_regclass('onceboard.half_done') AS t`);
      const recorded = await client.query(
        `SELECT 1 FROM onceboard._prisma_migrations WHERE migration_name = '29991231000000_broken'`,
      );
      await client.end();
      expect(rows[0].t).toBeNull();
      expect(recorded.rowCount).toBe(0);
    } finally {
      await db.drop();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
  it("no two migrations share a timestamp", async () => {
    const migrations = [...(await readMigrations(LEGACY_MIGRATIONS_DIR)), ...(await readMigrations())];
    const stamps = migrations.map((m) => m.name.slice(0, 14));
    const shared = stamps.filter((t, i) => stamps.indexOf(t) !== i);
    expect(shared).toEqual([]);
    expect(Object.keys(RENAMED_MIGRATIONS).every((name) => migrations.some((m) => m.name === name))).toBe(true);
  });

  it("a migration recorded under its old name is not applied again: its record is renamed", async () => {
    const db = await emptyDatabase(base);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "onceboard-migrations-"));
    const write = async (name: string, sql: string) => {
      await fs.mkdir(path.join(dir, name), { recursive: true });
      await fs.writeFile(path.join(dir, name, "migration.sql"), sql);
    };
    try {
      // An existing database applied two migrations that shared a timestamp.
      await write("20260101000000_a", "CREATE TABLE a (id int);\n");
      await write("20260101000000_b", "CREATE TABLE b (id int);\n");
      expect(consoleOnly((await migrateConsole(db.url, { dir, renamed: {} })).applied)).toEqual([
        "20260101000000_a",
        "20260101000000_b",
      ]);
      // The repository renames b (same file) and adds c.
      await fs.rename(path.join(dir, "20260101000000_b"), path.join(dir, "20260101000100_b"));
      await write("20260101000200_c", "CREATE TABLE c (id int);\n");
      const renamed = { "20260101000100_b": "20260101000000_b" };
      // Without the alias, b would run again and fail on its existing table: the alias is what saves it.
      await expect(migrateConsole(db.url, { dir, renamed: {} })).rejects.toThrow(/20260101000100_b\/migration.sql failed/);
      const result = await migrateConsole(db.url, { dir, renamed });
      expect(result.applied).toEqual(["20260101000200_c"]);
      expect(consoleOnly(result.alreadyApplied)).toEqual(["20260101000000_a", "20260101000100_b"]);
      const client = new pg.Client(db.url);
      await client.connect();
      const { rows } = await client.query(`SELECT migration_name FROM onceboard._prisma_migrations ORDER BY migration_name`);
      await client.end();
      expect(rows.map((r) => r.migration_name)).toEqual(["20260101000000_a", "20260101000100_b", "20260101000200_c"]);
      // Idempotent: a second run finds everything under the new names.
      expect((await migrateConsole(db.url, { dir, renamed })).applied).toEqual([]);
    } finally {
      await db.drop();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses a rename whose old record is of another file", async () => {
    const db = await emptyDatabase(base);
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "onceboard-migrations-"));
    try {
      await fs.mkdir(path.join(dir, "20260101000000_b"));
      await fs.writeFile(path.join(dir, "20260101000000_b", "migration.sql"), "CREATE TABLE b (id int);\n");
      await migrateConsole(db.url, { dir, renamed: {} });
      await fs.rename(path.join(dir, "20260101000000_b"), path.join(dir, "20260101000100_b"));
      await fs.writeFile(path.join(dir, "20260101000100_b", "migration.sql"), "CREATE TABLE b2 (id int);\n");
      await expect(migrateConsole(db.url, { dir, renamed: { "20260101000100_b": "20260101000000_b" } })).rejects.toThrow(
        /renamed from 20260101000000_b, but the record .* \(checksum differs\)/,
      );
    } finally {
      await db.drop();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
