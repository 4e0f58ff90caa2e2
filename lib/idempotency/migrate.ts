import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { isPgPool } from "./db";
import { migrateMysql } from "./migrate-mysql";
import {
  alreadyApplied,
  assertSchemaKnown,
  type LibraryMigrateResult,
  type LibraryMigration,
  LibraryMigrationError,
  type MigrateOptions,
  migratedByComment,
  readMigrationsIn,
  versionInComment,
} from "./migration-history";
import { isMariadbPool, isMysqlPool, isMysqlUrl, type MariadbPoolLike, type MysqlPoolLike, mysqlHandleOf } from "./mysql";
import { inSchema, schemaNameOf } from "./schema";
import { LIBRARY_VERSION } from "./version";

export {
  type LibraryMigrateResult,
  type LibraryMigration,
  type MigrateOptions,
  SchemaNewerThanLibraryError,
} from "./migration-history";

/**
 * Installs or upgrades the library's schema (default `onceboard`): the effects table, rollups and
 * functions, nothing of the console or the demo, so an application can keep its effects in its own
 * database. On MySQL and MariaDB (a mysql2/promise pool, or a mysql:// URL) the schema is a
 * database of that name, and the migrations are migrations-mysql/ (migrate-mysql.ts). Like pg-boss's and graphile-worker's, it is safe to call at every start: migrations
 * already applied are skipped, concurrent callers queue on an advisory lock, and each migration
 * commits together with its record in `<schema>.migrations`. A migration edited after it was
 * applied is refused (its checksum differs).
 *
 * Afterwards the partitions from yesterday to `partitionsAhead` days ahead exist (the partition
 * manager, `maintain()`, keeps them coming).
 */
/** The advisory lock every migrate() holds: one installer at a time per database. */
const MIGRATE_LOCK = "onceboard:migrate";

// Beside this file in the repository (lib/idempotency/migrations, migrations-mysql) and in the package.
export const LIBRARY_MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "migrations");
export const MYSQL_MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "migrations-mysql");

export function readLibraryMigrations(dir = LIBRARY_MIGRATIONS_DIR): LibraryMigration[] {
  return readMigrationsIn(dir);
}

type Connectable = pg.Pool | pg.Client | MysqlPoolLike | MariadbPoolLike | string;

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
  if (isMariadbPool(db)) return migrate(mysqlHandleOf(db) as MysqlPoolLike, options);
  if (isMysqlPool(db) || isMysqlUrl(db)) {
    const migrations = readLibraryMigrations(MYSQL_MIGRATIONS_DIR);
    return migrateMysql(db, migrations, options, (schema, applied, comment) =>
      assertSchemaKnown(schema, applied, migrations, comment),
    );
  }
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
    const comment =
      (
        await client.query<{ comment: string | null }>("SELECT obj_description($1::regclass, 'pg_class') AS comment", [
          `${schema}.migrations`,
        ])
      ).rows[0]?.comment ?? null;
    assertSchemaKnown(schema, rows, migrations, comment);
    const applied = new Map(rows.map((r) => [r.version, r]));
    for (const m of migrations) {
      if (alreadyApplied(m, applied.get(m.version), `schema ${schema}`)) {
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
    if (result.applied.length > 0 || versionInComment(comment) === undefined) {
      // COMMENT takes no parameters: the version is a literal of this module, quoted as SQL.
      await client.query(
        `COMMENT ON TABLE ${schema}.migrations IS '${migratedByComment(LIBRARY_VERSION).replaceAll("'", "''")}'`,
      );
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
