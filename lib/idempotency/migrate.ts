import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { isPgPool } from "./db";
import { inSchema, schemaNameOf } from "./schema";

/**
 * Installs or upgrades the library's schema (default `onceboard`): the effects table, rollups and
 * functions, nothing of the console or the demo, so an application can keep its effects in its own
 * database. Like pg-boss's and graphile-worker's, it is safe to call at every start: migrations
 * already applied are skipped, concurrent callers queue on an advisory lock, and each migration
 * commits together with its record in `<schema>.migrations`. A migration edited after it was
 * applied is refused (its checksum differs).
 *
 * Afterwards the partitions from yesterday to `partitionsAhead` days ahead exist (the partition
 * manager, `maintain()`, keeps them coming).
 */
export interface MigrateOptions {
  /** The schema to install into. Default "onceboard". */
  schema?: string;
  /** Days of effects partitions to make ahead of today. Default 7; 0 makes none. */
  partitionsAhead?: number;
  /** Called with each migration applied. */
  onApplied?: (name: string) => void;
}

export interface LibraryMigration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export interface LibraryMigrateResult {
  schema: string;
  applied: string[];
  alreadyApplied: string[];
}

export class LibraryMigrationError extends Error {
  readonly code = "LIBRARY_MIGRATION_FAILED";
}

/** The advisory lock every migrate() holds: one installer at a time per database. */
const MIGRATE_LOCK = "onceboard:migrate";

// Beside this file in the repository (lib/idempotency/migrations) and in the package (dist/migrations).
export const LIBRARY_MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "migrations");

// turbopackIgnore: the console's bundle reaches this module through the library's entry point,
// and a path computed at run time would make Turbopack trace the whole project into the build.
export function readLibraryMigrations(dir = LIBRARY_MIGRATIONS_DIR): LibraryMigration[] {
  return fs
    .readdirSync(/* turbopackIgnore: true */ dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((f) => {
      const bytes = fs.readFileSync(/* turbopackIgnore: true */ path.join(dir, f));
      return {
        version: Number(f.slice(0, 4)),
        name: f.slice(0, -4),
        sql: bytes.toString("utf8"),
        checksum: createHash("sha256").update(bytes).digest("hex"),
      };
    });
}

type Connectable = pg.Pool | pg.Client | string;

/** The bookkeeping table's DDL for a schema (also written by the legacy upgrade). */
export function migrationsTableSql(schema: string): string {
  return inSchema(
    `CREATE TABLE IF NOT EXISTS onceboard.migrations (
  version integer PRIMARY KEY,
  name text NOT NULL,
  checksum text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`,
    schema,
  );
}

export async function migrate(db: Connectable, options: MigrateOptions = {}): Promise<LibraryMigrateResult> {
  const schema = schemaNameOf(options.schema);
  const migrations = readLibraryMigrations();
  const own = typeof db === "string" ? new pg.Client({ connectionString: db, application_name: "onceboard-migrate" }) : null;
  if (own) await own.connect();
  const client: pg.Client | pg.PoolClient = own ?? (isPgPool(db) ? await db.connect() : (db as pg.Client));
  const result: LibraryMigrateResult = { schema, applied: [], alreadyApplied: [] };
  let locked = false;
  try {
    await client.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [`${MIGRATE_LOCK}:${schema}`]);
    locked = true;
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(migrationsTableSql(schema));
    const { rows } = await client.query<{ version: number; checksum: string; name: string }>(
      `SELECT version, checksum, name FROM ${schema}.migrations`,
    );
    const applied = new Map(rows.map((r) => [r.version, r]));
    for (const m of migrations) {
      const row = applied.get(m.version);
      if (row) {
        if (row.checksum !== m.checksum) {
          throw new LibraryMigrationError(
            `library migration ${m.name} was edited after it was applied to schema ${schema} (checksum ${m.checksum.slice(0, 12)}… ≠ recorded ${row.checksum.slice(0, 12)}…): add a new migration instead`,
          );
        }
        result.alreadyApplied.push(m.name);
        continue;
      }
      await client.query("BEGIN");
      try {
        await client.query(inSchema(m.sql, schema));
        await client.query(`INSERT INTO ${schema}.migrations (version, name, checksum) VALUES ($1, $2, $3)`, [
          m.version,
          m.name,
          m.checksum,
        ]);
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw new LibraryMigrationError(
          `library migration ${m.name} failed in schema ${schema}: ${error instanceof Error ? error.message : String(error)}`,
          { cause: error },
        );
      }
      result.applied.push(m.name);
      options.onApplied?.(m.name);
    }
    const ahead = options.partitionsAhead ?? 7;
    if (ahead > 0) {
      await client.query(
        `SELECT ${schema}.onceboard_ensure_partitions((now() AT TIME ZONE 'UTC')::date - 1, (now() AT TIME ZONE 'UTC')::date + $1::int)`,
        [ahead],
      );
    }
    return result;
  } finally {
    if (locked)
      await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [`${MIGRATE_LOCK}:${schema}`]).catch(() => {});
    if (own) await own.end();
    else if (isPgPool(db)) (client as pg.PoolClient).release();
  }
}
