import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { isPgPool } from "./db";
import { inSchema, schemaNameOf } from "./schema";
import { LIBRARY_PACKAGE, LIBRARY_VERSION } from "./version";

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

class LibraryMigrationError extends Error {
  readonly code: string = "LIBRARY_MIGRATION_FAILED";
}

/**
 * The schema holds migrations this copy of the library does not have: a newer version migrated
 * it. Running on regardless would claim with SQL the schema no longer matches, so migrate() stops.
 */
export class SchemaNewerThanLibraryError extends LibraryMigrationError {
  override readonly code = "SCHEMA_NEWER_THAN_LIBRARY";
  constructor(
    message: string,
    /** The version that last advanced the schema (recorded by its migrate()), when it is known. */
    readonly requiredVersion: string | undefined,
  ) {
    super(message);
  }
}

/**
 * Written as the comment of `<schema>.migrations` by each migrate() that applies something: the
 * version whose migrations the schema now has. A comment, not a column, so recording it needs no
 * migration and an older library can still read it.
 */
const MIGRATED_BY = `migrated by ${LIBRARY_PACKAGE} `;
const migratedByComment = (version: string) => `${MIGRATED_BY}${version}`;
function versionInComment(comment: string | null): string | undefined {
  return comment?.startsWith(MIGRATED_BY) ? comment.slice(MIGRATED_BY.length).trim() || undefined : undefined;
}

/** Refuses a schema whose newest applied migration is past the newest this library ships. */
function assertSchemaKnown(
  schema: string,
  applied: readonly { version: number; name: string }[],
  known: readonly LibraryMigration[],
  comment: string | null,
): void {
  const newestKnown = known.reduce((max, m) => Math.max(max, m.version), 0);
  const unknown = applied.filter((row) => row.version > newestKnown).sort((a, b) => a.version - b.version);
  const newest = unknown.at(-1);
  if (!newest) return;
  const required = versionInComment(comment);
  const install = required
    ? `install ${LIBRARY_PACKAGE}@${required} or newer (the version that migrated it)`
    : `install the newer ${LIBRARY_PACKAGE} that migrated it`;
  throw new SchemaNewerThanLibraryError(
    `schema ${schema} has migration ${newest.name}, newer than this ${LIBRARY_PACKAGE} ${LIBRARY_VERSION} knows (its newest is ${String(newestKnown).padStart(4, "0")}): ${install}`,
    required,
  );
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
    const comment =
      (
        await client.query<{ comment: string | null }>("SELECT obj_description($1::regclass, 'pg_class') AS comment", [
          `${schema}.migrations`,
        ])
      ).rows[0]?.comment ?? null;
    assertSchemaKnown(schema, rows, migrations, comment);
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
