import fs from "node:fs/promises";
import path from "node:path";
import { functionDefinitions } from "../lib/db/sql-functions";
import { LIBRARY_MIGRATIONS_DIR, readLibraryMigrations } from "../lib/idempotency/admin";

export { functionDefinitions };

/**
 * The worker library's SQL functions each live in one source file, lib/idempotency/sql/<name>.sql
 * (a `CREATE OR REPLACE FUNCTION` with its comments). Migrations stay immutable: changing a
 * function means editing its source and stamping a new migration from it (`npm run db:stamp`).
 * scripts/sql-sources.test.ts checks that the migrated database defines each function exactly as
 * its source does.
 */
export const SQL_SOURCES_DIR = path.resolve(import.meta.dirname, "../lib/idempotency/sql");
/** The console's own functions (the audit log's guard), created by prisma/migrations. */
export const CONSOLE_SQL_SOURCES_DIR = path.resolve(import.meta.dirname, "../prisma/sql");

export interface SqlSource {
  /** The function's name, = the file's name without .sql. */
  name: string;
  file: string;
  /** The whole file. */
  text: string;
  /** From `CREATE` to the closing `$$;`. */
  definition: string;
}

/** Same function text whether created or replaced. */
export function normalizeDefinition(definition: string): string {
  return definition.replace(/^CREATE (?:OR REPLACE )?FUNCTION/, "CREATE OR REPLACE FUNCTION").trim();
}

export async function readSqlSources(dir = SQL_SOURCES_DIR): Promise<SqlSource[]> {
  const files = (await fs.readdir(dir)).filter((f) => f.endsWith(".sql")).sort();
  return Promise.all(
    files.map(async (f) => {
      const file = path.join(dir, f);
      const text = await fs.readFile(file, "utf8");
      const name = f.slice(0, -4);
      const defs = functionDefinitions(text);
      if (defs.length !== 1 || defs[0]?.name !== name) {
        throw new Error(
          `${file} must define exactly one function, ${name} (found: ${defs.map((d) => d.name).join(", ") || "none"})`,
        );
      }
      return { name, file, text, definition: defs[0].definition };
    }),
  );
}

/** The last definition of each function across the library's migrations, and the migration holding it. */
export function lastDefinitions(
  migrations: { name: string; sql: string }[],
): Map<string, { migration: string; definition: string }> {
  const last = new Map<string, { migration: string; definition: string }>();
  for (const m of migrations)
    for (const d of functionDefinitions(m.sql)) last.set(d.name, { migration: m.name, definition: d.definition });
  return last;
}

export interface StampOptions {
  /** The migration's name after its number: lowercase letters, digits, underscores. */
  name: string;
  /** Functions to stamp; default those whose source differs from their last migration. */
  functions?: string[];
  /** A comment saying why, put at the top of the migration. */
  note?: string;
  sourcesDir?: string;
  migrationsDir?: string;
}

/**
 * Writes lib/idempotency/migrations/<NNNN>_<name>.sql (the next number) from the library's
 * function sources; returns the file. The library's migrate() applies it, in any schema.
 */
export async function stampMigration(options: StampOptions): Promise<{ file: string; functions: string[] }> {
  if (!/^[a-z0-9_]+$/.test(options.name)) throw new Error(`migration name "${options.name}": use a-z, 0-9 and _`);
  const migrationsDir = options.migrationsDir ?? LIBRARY_MIGRATIONS_DIR;
  const migrations = readLibraryMigrations(migrationsDir);
  const sources = await readSqlSources(options.sourcesDir);
  const last = lastDefinitions(migrations);
  const chosen = options.functions
    ? options.functions.map((f) => {
        const s = sources.find((x) => x.name === f);
        if (!s) throw new Error(`no source file for function ${f}`);
        return s;
      })
    : sources.filter((s) => normalizeDefinition(s.definition) !== normalizeDefinition(last.get(s.name)?.definition ?? ""));
  if (chosen.length === 0) throw new Error("no function source differs from its last migration: nothing to stamp");

  const version = (migrations.at(-1)?.version ?? 0) + 1;
  const file = path.join(migrationsDir, `${String(version).padStart(4, "0")}_${options.name}.sql`);
  const note = options.note ? `${options.note.replace(/^/gm, "-- ")}\n--\n` : "";
  const body = [
    `${note}-- Stamped by \`npm run db:stamp\` from lib/idempotency/sql/ (${chosen.map((s) => `${s.name}.sql`).join(", ")}):`,
    "-- edit those sources, never this migration. Objects are named onceboard.<name>: migrate() rewrites that.",
    "",
    ...chosen.map((s) => s.text.trimEnd()),
    "",
  ].join("\n");
  await fs.writeFile(file, body, { flag: "wx" });
  return { file, functions: chosen.map((s) => s.name) };
}
