import fs from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { DEFAULT_SCHEMA } from "../idempotency";
import { readLibraryMigrations } from "../idempotency/admin";
import { LEGACY_MIGRATIONS_DIR, migrateConsole, readMigrations } from "./migrate";
import { searchPathOption } from "./pool";
import { dumpSchema } from "./schema-dump";
import { createScratchDatabase } from "./scratch";

const DUMP_FILE = path.resolve(import.meta.dirname, "../../prisma/schema.sql");

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 2 });
});
afterAll(async () => {
  await db?.drop();
});

describe("prisma/schema.sql", () => {
  it("is what the migrations produce (else: npm run db:dump)", async () => {
    const committed = await fs.readFile(DUMP_FILE, "utf8");
    const actual = await dumpSchema(db.pool);
    // toBe on the whole text shows the differing lines when it fails.
    expect(actual, "prisma/schema.sql is stale: run `npm run db:dump` and commit it").toBe(committed);
  });

  it("goes stale when the schema changes", async () => {
    const before = await dumpSchema(db.pool);
    await db.pool.query("CREATE INDEX schema_dump_probe_idx ON audit_log (actor)");
    try {
      const after = await dumpSchema(db.pool);
      expect(after).not.toBe(before);
      expect(after).toContain("CREATE INDEX schema_dump_probe_idx ON onceboard.audit_log USING btree (actor);");
    } finally {
      await db.pool.query("DROP INDEX schema_dump_probe_idx");
    }
  });
});

describe("a database made by the pre-schema chain (everything in public)", () => {
  it("is moved into the onceboard schema by migrate(): same schema as a fresh install, rows kept, demo tables in onceboard_demo", async () => {
    const legacy = await createScratchDatabase(db.url, { prefix: `${db.name}_legacy` });
    // The dump names objects relative to the search_path: compared with the test pool's, it needs the same one.
    const client = new pg.Client({ connectionString: legacy.url, options: searchPathOption(DEFAULT_SCHEMA) });
    await client.connect();
    try {
      // What a database migrated before the library had its own schema looks like, with data in it.
      await client.query(`CREATE TABLE public."_prisma_migrations" (id varchar(36) PRIMARY KEY, checksum varchar(64) NOT NULL,
        finished_at timestamptz, migration_name varchar(255) NOT NULL, logs text, rolled_back_at timestamptz,
        started_at timestamptz NOT NULL DEFAULT now(), applied_steps_count integer NOT NULL DEFAULT 0)`);
      for (const m of await readMigrations(LEGACY_MIGRATIONS_DIR)) {
        await client.query("SET search_path = public");
        await client.query(m.sql);
        await client.query(
          `INSERT INTO public."_prisma_migrations" (id, checksum, migration_name, finished_at, applied_steps_count)
           VALUES (gen_random_uuid()::text, $1, $2, now(), 1)`,
          [m.checksum, m.name],
        );
      }
      await client.query("SELECT public.onceboard_ensure_partitions(current_date - 1, current_date + 1)");
      await client.query(
        "INSERT INTO public.effects (tenant_id, key, job_type, status, policy) VALUES ('t1', 'charge:ord-1', 'charge', 'completed', 'external')",
      );
      await client.query("INSERT INTO public.audit_log (actor, action) VALUES ('legacy', 'probe')");
      await client.query("INSERT INTO public.demo_orders (tenant_id, order_id, amount_cents) VALUES ('t1', 'ord-1', 100)");
      await client.query("RESET search_path");

      const result = await migrateConsole(legacy.url);
      // The upgrade records the library's baseline and the console's; only later migrations still run.
      const later = readLibraryMigrations()
        .slice(1)
        .map((m) => `library ${m.name}`);
      // And the console's migrations after the baseline the upgrade records.
      const consoleLater = (await readMigrations()).slice(1).map((m) => m.name);
      expect(result.applied).toEqual(["upgrade: public -> onceboard", ...later, ...consoleLater]);

      expect(await dumpSchema(client)).toBe(await dumpSchema(db.pool));
      const { rows } = await client.query(
        `SELECT (SELECT count(*)::int FROM onceboard.effects) AS effects, (SELECT count(*)::int FROM onceboard.audit_log) AS audit,
                (SELECT count(*)::int FROM onceboard_demo.demo_orders) AS orders,
                (SELECT count(*)::int FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p')) AS left_in_public`,
      );
      expect(rows[0]).toEqual({ effects: 1, audit: 1, orders: 1, left_in_public: 0 });
      // A second run finds nothing to do.
      expect((await migrateConsole(legacy.url)).applied).toEqual([]);
    } finally {
      await client.end();
      await legacy.drop();
    }
  });
});
