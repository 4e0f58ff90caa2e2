import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { migrate as migrateLibrary } from "../idempotency";
import { inSchema, schemaNameOf } from "../idempotency/admin";
import { upgradeLegacyDatabase } from "./upgrade-legacy";

/**
 * Applies prisma/migrations/<timestamp>_<name>/migration.sql in order, recording each in
 * `_prisma_migrations` exactly as Prisma Migrate does, so `prisma migrate status` agrees.
 *
 * Concurrency: the whole run holds the same session advisory lock Prisma Migrate takes
 * (72707369), so two appliers — ours or Prisma's — never interleave; the second waits, then
 * finds everything applied.
 */
const PRISMA_MIGRATE_LOCK_ID = 72707369;

export const DEFAULT_MIGRATIONS_DIR = path.resolve(import.meta.dirname, "../../prisma/migrations");
/** The chain that kept everything in `public`, applied only to databases it made (upgrade-legacy.ts). */
export const LEGACY_MIGRATIONS_DIR = path.resolve(import.meta.dirname, "../../prisma/legacy-migrations");

/**
 * Migrations renamed after they shipped: new name → the name databases may have recorded.
 * 20261130020000_demo shared its timestamp with 20261130020000_claims_fast; it became
 * 20261130021000_demo (same file, same checksum, same position in the order). A database that
 * recorded the old name is not asked to apply it again: the applier renames its record, as
 * `prisma migrate resolve` would by hand, so `prisma migrate status` agrees afterwards.
 */
export const RENAMED_MIGRATIONS: Readonly<Record<string, string>> = {
  "20261130021000_demo": "20261130020000_demo",
};

export class MigrationError extends Error {
  readonly code = "MIGRATION_FAILED";
}

interface MigrationFile {
  name: string;
  file: string;
  sql: string;
  checksum: string;
}

interface MigrateResult {
  applied: string[];
  alreadyApplied: string[];
}

export async function readMigrations(dir = DEFAULT_MIGRATIONS_DIR): Promise<MigrationFile[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory() && /^\d{14}_[\w-]+$/.test(e.name))
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const file = path.join(dir, name, "migration.sql");
      const bytes = await fs.readFile(file);
      return { name, file, sql: bytes.toString("utf8"), checksum: createHash("sha256").update(bytes).digest("hex") };
    }),
  );
}

// Prisma Migrate's own DDL for its bookkeeping table, column for column.
const createPrismaMigrations = (table: string) => `
CREATE TABLE IF NOT EXISTS ${table} (
  "id"                  VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum"            VARCHAR(64) NOT NULL,
  "finished_at"         TIMESTAMPTZ,
  "migration_name"      VARCHAR(255) NOT NULL,
  "logs"                TEXT,
  "rolled_back_at"      TIMESTAMPTZ,
  "started_at"          TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

interface MigrateOptions {
  /** The console chain's folder. Default prisma/migrations. */
  dir?: string;
  /** The pre-schema chain's folder. Default prisma/legacy-migrations. */
  legacyDir?: string;
  /** The schema the library and the console live in. Default onceboard (ONCEBOARD_SCHEMA). */
  schema?: string;
  onApplied?: (name: string) => void;
  /** Renames in the console chain (new name → recorded name); the legacy chain's are RENAMED_MIGRATIONS. */
  renamed?: Readonly<Record<string, string>>;
}

/**
 * The console's migrate, in three steps under one lock:
 *  1. a database made by the pre-schema chain (tables in `public`) is brought to that chain's end
 *     and moved into the schema (lib/db/upgrade-legacy.ts);
 *  2. the worker library's own migrate() installs or upgrades the library's objects;
 *  3. the console's chain (prisma/migrations: tokens, login links, audit) is applied, recorded in
 *     `<schema>._prisma_migrations` as Prisma Migrate would.
 * Nothing of the demo is created: the demo installs its own schema when it starts.
 */
export async function migrateConsole(connectionString: string, options: MigrateOptions = {}): Promise<MigrateResult> {
  const schema = schemaNameOf(options.schema);
  const client = new pg.Client({ connectionString, application_name: "onceboard-migrate" });
  await client.connect();
  const result: MigrateResult = { applied: [], alreadyApplied: [] };
  try {
    await client.query("SELECT pg_advisory_lock($1)", [PRISMA_MIGRATE_LOCK_ID]);
    if (await isLegacyDatabase(client)) {
      const legacy = await applyChain(client, await readMigrations(options.legacyDir ?? LEGACY_MIGRATIONS_DIR), {
        table: `public."_prisma_migrations"`,
        renamed: RENAMED_MIGRATIONS,
        onApplied: options.onApplied,
      });
      result.applied.push(...legacy.applied);
      await upgradeLegacyDatabase(client, schema);
      result.applied.push(`upgrade: public -> ${schema}`);
      options.onApplied?.(`upgrade: public -> ${schema}`);
    }
    const library = await migrateLibrary(client, {
      schema,
      partitionsAhead: 0,
      onApplied: (name) => options.onApplied?.(`library ${name}`),
    });
    result.applied.push(...library.applied.map((n) => `library ${n}`));
    result.alreadyApplied.push(...library.alreadyApplied.map((n) => `library ${n}`));
    const own = await applyChain(client, await readMigrations(options.dir), {
      table: `${schema}."_prisma_migrations"`,
      renamed: options.renamed ?? {},
      onApplied: options.onApplied,
      rewrite: (sql) => inSchema(sql, schema),
    });
    result.applied.push(...own.applied);
    result.alreadyApplied.push(...own.alreadyApplied);
    return result;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [PRISMA_MIGRATE_LOCK_ID]).catch(() => {});
    await client.end();
  }
}

/** Made by the chain that kept everything in `public` (before the library had its own schema). */
async function isLegacyDatabase(client: pg.Client): Promise<boolean> {
  const { rows } = await client.query<{ legacy: boolean }>(
    `SELECT to_regclass('public._prisma_migrations') IS NOT NULL AND to_regclass('public.effects') IS NOT NULL AS legacy`,
  );
  return rows[0]?.legacy === true;
}

async function applyChain(
  client: pg.Client,
  migrations: MigrationFile[],
  options: {
    table: string;
    renamed: Readonly<Record<string, string>>;
    onApplied?: (name: string) => void;
    rewrite?: (sql: string) => string;
  },
): Promise<MigrateResult> {
  const { table, renamed } = options;
  await client.query(createPrismaMigrations(table));
  const { rows } = await client.query<AppliedRow>(
    `SELECT migration_name, checksum, finished_at, rolled_back_at FROM ${table} WHERE rolled_back_at IS NULL`,
  );
  const applied = new Map(rows.map((r) => [r.migration_name, r]));
  const result: MigrateResult = { applied: [], alreadyApplied: [] };
  for (const migration of migrations) {
    const oldName = renamed[migration.name];
    const oldRow = oldName === undefined || applied.has(migration.name) ? undefined : applied.get(oldName);
    if (oldName !== undefined && oldRow) {
      if (!oldRow.finished_at || oldRow.checksum !== migration.checksum) {
        throw new MigrationError(
          `migration ${migration.name} was renamed from ${oldName}, but the record of ${oldName} is ${oldRow.finished_at ? "of another file (checksum differs)" : "unfinished"}: resolve it by hand in _prisma_migrations`,
        );
      }
      // Recorded under its old name: the same migration, already applied (the checksum proves
      // it is the same file). Rename the record instead of applying it again.
      await client.query(`UPDATE ${table} SET migration_name = $1 WHERE migration_name = $2 AND rolled_back_at IS NULL`, [
        migration.name,
        oldName,
      ]);
      applied.delete(oldName);
      applied.set(migration.name, oldRow);
    }
    const row = applied.get(migration.name);
    if (row?.finished_at) {
      if (row.checksum !== migration.checksum) {
        throw new MigrationError(
          `migration ${path.relative(process.cwd(), migration.file)} was edited after it was applied (checksum ${migration.checksum.slice(0, 12)}… ≠ recorded ${row.checksum.slice(0, 12)}…): add a new migration instead`,
        );
      }
      result.alreadyApplied.push(migration.name);
      continue;
    }
    if (row) {
      throw new MigrationError(
        `migration ${migration.name} is recorded as started but never finished: resolve it by hand in _prisma_migrations`,
      );
    }
    await applyOne(client, migration, table, options.rewrite ?? ((sql) => sql));
    result.applied.push(migration.name);
    options.onApplied?.(migration.name);
  }
  return result;
}

async function applyOne(
  client: pg.Client,
  migration: MigrationFile,
  table: string,
  rewrite: (sql: string) => string,
): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query(rewrite(migration.sql));
    await client.query(
      `INSERT INTO ${table} (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
       VALUES ($1, $2, $3, now(), clock_timestamp(), 1)`,
      [randomUUID(), migration.checksum, migration.name],
    );
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    const message = error instanceof Error ? error.message : String(error);
    throw new MigrationError(`migration ${path.relative(process.cwd(), migration.file)} failed: ${message}`);
  }
}
