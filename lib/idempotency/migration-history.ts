import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { LIBRARY_PACKAGE, LIBRARY_VERSION } from "./version";

/**
 * What migrate() knows of a schema's history on either engine (migrate.ts, migrate-mysql.ts): the
 * migrations a copy of the library ships, the version recorded by the last migrate() that applied
 * something, and the refusal of a schema a newer library migrated.
 */

/** What migrate() takes, on either engine. */
export interface MigrateOptions {
  /** The schema to install into (on MySQL: the database). Default "onceboard". */
  schema?: string;
  /** Days of partitions (effects and the delivery timeline; on MySQL the timeline's) to make ahead of today. Default 7; 0 makes none. */
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
export const migratedByComment = (version: string) => `${MIGRATED_BY}${version}`;
export function versionInComment(comment: string | null): string | undefined {
  return comment?.startsWith(MIGRATED_BY) ? comment.slice(MIGRATED_BY.length).trim() || undefined : undefined;
}

/** Refuses a schema whose newest applied migration is past the newest this library ships. */
export function assertSchemaKnown(
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

/** The migration files of `dir` (NNNN_name.sql), in order, with their checksums. */
// turbopackIgnore: the console's bundle reaches this module through the library's entry point,
// and a path computed at run time would make Turbopack trace the whole project into the build.
export function readMigrationsIn(dir: string): LibraryMigration[] {
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

/**
 * Whether a shipped migration is already applied where `place` names (`schema onceboard`,
 * `database shop`). One applied and since edited is refused, never re-run: the database holds
 * what the old text made, and a new migration is how a change arrives.
 */
export function alreadyApplied(
  migration: Pick<LibraryMigration, "name" | "checksum">,
  recorded: { checksum: string } | undefined,
  place: string,
): boolean {
  if (!recorded) return false;
  if (recorded.checksum !== migration.checksum) {
    throw new LibraryMigrationError(
      `library migration ${migration.name} was edited after it was applied to ${place} (checksum ${migration.checksum.slice(0, 12)}… ≠ recorded ${recorded.checksum.slice(0, 12)}…): add a new migration instead`,
    );
  }
  return true;
}
