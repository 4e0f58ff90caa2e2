import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { inSchema, migrationsTableSql, readLibraryMigrations } from "../idempotency/admin";
import { functionDefinitions } from "./sql-functions";

/**
 * Moves a database made by the pre-schema chain (prisma/legacy-migrations: everything in `public`)
 * into the schema the library and the console now use, in one transaction: nothing is copied,
 * every table (effects with all its partitions and rows, rollups, tokens, audit log) is moved
 * with ALTER … SET SCHEMA, the functions are re-created from their sources (their bodies now name
 * the schema), and both chains record the state they would have produced, so the library's
 * migrate() and the console's chain find nothing to do. The demo's tables move to onceboard_demo
 * (the demo's own schema). lib/db/schema-dump.test.ts checks the result equals a fresh install.
 *
 * Callers hold the migration lock and have applied the legacy chain to its end first.
 */
const LEGACY_LIBRARY_TABLES = [
  "claim_latency_hour",
  "claim_latency_minute",
  "effects",
  "maintenance_runs",
  "retention_settings",
  "tenant_suppressions_hour",
  "tenant_violations_hour",
  "uncaught_violations_minute",
  "worker_gaps_day",
  "worker_gaps_hour",
  "worker_registrations",
  "worker_stats_hour",
  "worker_stats_minute",
] as const;
const LEGACY_CONSOLE_TABLES = ["api_tokens", "login_links", "audit_log"] as const;
/** The demo's schema, as lib/demo/schema.ts names it (lib/db may not import lib/demo). */
export const DEMO_SCHEMA = "onceboard_demo";

const CONSOLE_BASELINE = "20261202000000_console";
const CONSOLE_BASELINE_FILE = path.resolve(import.meta.dirname, `../../prisma/migrations/${CONSOLE_BASELINE}/migration.sql`);

export async function upgradeLegacyDatabase(client: pg.Client, schema: string): Promise<void> {
  const q = (sql: string, values?: unknown[]) => client.query(sql, values);
  const target = pg.escapeIdentifier(schema);
  const library = readLibraryMigrations();
  const baseline = library[0];
  if (!baseline) throw new Error("no library migrations found");
  const consoleSql = fs.readFileSync(CONSOLE_BASELINE_FILE);
  await q("BEGIN");
  try {
    await q(`CREATE SCHEMA IF NOT EXISTS ${target}`);
    for (const table of [...LEGACY_LIBRARY_TABLES, ...LEGACY_CONSOLE_TABLES]) {
      await q(`ALTER TABLE IF EXISTS public.${table} SET SCHEMA ${target}`);
    }
    // Partitions are tables of their own, and so are partitions an interrupted retention run
    // detached but did not drop yet (marked by their comment).
    const { rows: parts } = await q(
      `SELECT c.relname AS name FROM pg_class c
        WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r'
          AND (c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = $1::regclass)
               OR obj_description(c.oid, 'pg_class') LIKE 'onceboard:retention detach%')`,
      [`${schema}.effects`],
    );
    for (const p of parts as { name: string }[])
      await q(`ALTER TABLE public.${pg.escapeIdentifier(p.name)} SET SCHEMA ${target}`);
    await q(`ALTER TYPE public.onceboard_claim_result SET SCHEMA ${target}`);
    // Triggers point at their functions by oid: move the functions, then replace their bodies.
    const { rows: fns } = await q(
      `SELECT p.oid::regprocedure::text AS signature FROM pg_proc p
        WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'onceboard\\_%'`,
    );
    for (const f of fns as { signature: string }[]) await q(`ALTER FUNCTION ${f.signature} SET SCHEMA ${target}`);
    await q("SET LOCAL check_function_bodies = off");
    const sources = [...functionDefinitions(baseline.sql), ...functionDefinitions(consoleSql.toString("utf8"))];
    for (const fn of sources) await q(inSchema(fn.definition, schema));

    await q(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(DEMO_SCHEMA)}`);
    const { rows: demo } = await q(
      `SELECT relname AS name FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind = 'r' AND relname LIKE 'demo\\_%'`,
    );
    for (const d of demo as { name: string }[]) await q(`ALTER TABLE public."${d.name}" SET SCHEMA ${DEMO_SCHEMA}`);

    await q(migrationsTableSql(schema));
    await q(`INSERT INTO ${target}.migrations (version, name, checksum) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [
      baseline.version,
      baseline.name,
      baseline.checksum,
    ]);
    await q(`CREATE TABLE ${target}."_prisma_migrations" (LIKE public."_prisma_migrations" INCLUDING ALL)`);
    await q(
      `INSERT INTO ${target}."_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count, logs)
       VALUES (gen_random_uuid()::text, $1, $2, now(), clock_timestamp(), 1, 'recorded by the upgrade from the public-schema chain')`,
      [createHash("sha256").update(consoleSql).digest("hex"), CONSOLE_BASELINE],
    );
    // The old chain's history describes files that are no longer the chain: it goes with it.
    await q(`DROP TABLE public."_prisma_migrations"`);
    await q("COMMIT");
  } catch (error) {
    await q("ROLLBACK").catch(() => {});
    throw new Error(
      `upgrading the database from the public schema to ${schema} failed (nothing was changed): ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}
