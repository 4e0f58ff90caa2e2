import fs from "node:fs/promises";
import path from "node:path";
import { DEFAULT_MIGRATIONS_DIR, type MigrationFile, readMigrations } from "../lib/db/migrate";

/**
 * The worker library's SQL functions each live in one source file, lib/idempotency/sql/<name>.sql
 * (a `CREATE OR REPLACE FUNCTION` with its comments). Migrations stay immutable: changing a
 * function means editing its source and stamping a new migration from it (`npm run db:stamp`).
 * scripts/sql-sources.test.ts checks that the migrated database defines each function exactly as
 * its source does.
 */
export const SQL_SOURCES_DIR = path.resolve(import.meta.dirname, "../lib/idempotency/sql");

export interface SqlSource {
  /** The function's name, = the file's name without .sql. */
  name: string;
  file: string;
  /** The whole file. */
  text: string;
  /** From `CREATE` to the closing `$$;`. */
  definition: string;
}

const CREATE_FUNCTION = /CREATE (?:OR REPLACE )?FUNCTION (\w+)\(/g;

/** Every `CREATE [OR REPLACE] FUNCTION name(…) … $$ … $$;` in a SQL text, in order. */
export function functionDefinitions(sql: string): { name: string; definition: string }[] {
  const found: { name: string; definition: string }[] = [];
  for (const m of sql.matchAll(CREATE_FUNCTION)) {
    const start = m.index ?? 0;
    const open = sql.indexOf("$$", start);
    const close = sql.indexOf("$$", open + 2);
    const end = sql.indexOf(";", close);
    if (open < 0 || close < 0 || end < 0) throw new Error(`unterminated function ${m[1]}`);
    found.push({ name: m[1] ?? "", definition: sql.slice(start, end + 1) });
  }
  return found;
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

/** The last definition of each function across the migrations, and the migration holding it. */
export function lastDefinitions(migrations: MigrationFile[]): Map<string, { migration: string; definition: string }> {
  const last = new Map<string, { migration: string; definition: string }>();
  for (const m of migrations)
    for (const d of functionDefinitions(m.sql)) last.set(d.name, { migration: m.name, definition: d.definition });
  return last;
}

export interface StampOptions {
  /** The migration's name after the timestamp: lowercase letters, digits, underscores. */
  name: string;
  /** YYYYMMDDHHMMSS; default now (UTC), and always after the latest migration. */
  timestamp?: string;
  /** Functions to stamp; default those whose source differs from their last migration. */
  functions?: string[];
  /** A comment saying why, put at the top of the migration. */
  note?: string;
  sourcesDir?: string;
  migrationsDir?: string;
}

function utcStamp(date: Date): string {
  return date.toISOString().replace(/[-:T]/g, "").slice(0, 14);
}

/** Writes prisma/migrations/<timestamp>_<name>/migration.sql from the sources; returns its directory. */
export async function stampMigration(options: StampOptions): Promise<{ dir: string; functions: string[] }> {
  if (!/^[a-z0-9_]+$/.test(options.name)) throw new Error(`migration name "${options.name}": use a-z, 0-9 and _`);
  const migrationsDir = options.migrationsDir ?? DEFAULT_MIGRATIONS_DIR;
  const migrations = await readMigrations(migrationsDir);
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

  const latest = migrations.at(-1)?.name.slice(0, 14) ?? "0";
  const timestamp = options.timestamp ?? utcStamp(new Date());
  if (!/^\d{14}$/.test(timestamp)) throw new Error(`timestamp ${timestamp}: expected YYYYMMDDHHMMSS`);
  if (timestamp <= latest) throw new Error(`timestamp ${timestamp} is not after the latest migration (${latest})`);

  const dir = path.join(migrationsDir, `${timestamp}_${options.name}`);
  const note = options.note ? `${options.note.replace(/^/gm, "-- ")}\n--\n` : "";
  const body = [
    `${note}-- Stamped by \`npm run db:stamp\` from lib/idempotency/sql/ (${chosen.map((s) => `${s.name}.sql`).join(", ")}):`,
    "-- edit those sources, never this migration.",
    "",
    ...chosen.map((s) => s.text.trimEnd()),
    "",
  ].join("\n");
  await fs.mkdir(dir);
  await fs.writeFile(path.join(dir, "migration.sql"), body);
  return { dir, functions: chosen.map((s) => s.name) };
}
