import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { readLibraryMigrations } from "../admin";
import { migrate, SchemaNewerThanLibraryError } from "../index";
import { LIBRARY_PACKAGE, LIBRARY_VERSION } from "../version";

/**
 * A team that rolls back a deploy runs an older library against a schema a newer one migrated.
 * migrate() must stop there, saying which version to install, rather than let the old claim SQL
 * run against tables and functions it was not written for.
 */
let db: TestDatabase;
let pool: pg.Pool;
beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 2 });
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  pool.on("error", () => {});
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

const newestKnown = () => Math.max(...readLibraryMigrations().map((m) => m.version));

/** What a newer library leaves behind: one more migration recorded, and its version on the table. */
async function migrateAsNewerVersion(schema: string, version: string | null): Promise<string> {
  const name = `${String(newestKnown() + 1).padStart(4, "0")}_from_the_future`;
  await pool.query(`INSERT INTO ${schema}.migrations (version, name, checksum) VALUES ($1, $2, 'x')`, [newestKnown() + 1, name]);
  await pool.query(
    version === null
      ? `COMMENT ON TABLE ${schema}.migrations IS NULL`
      : `COMMENT ON TABLE ${schema}.migrations IS 'migrated by ${LIBRARY_PACKAGE} ${version}'`,
  );
  return name;
}

describe("migrate() on a schema newer than the library", () => {
  it("records the library's version on the schema it migrates", async () => {
    await migrate(pool, { schema: "newer_recorded", partitionsAhead: 0 });
    const { rows } = await pool.query("SELECT obj_description('newer_recorded.migrations'::regclass, 'pg_class') AS c");
    expect(rows[0].c).toBe(`migrated by ${LIBRARY_PACKAGE} ${LIBRARY_VERSION}`);
  });

  it("refuses it, naming the version that migrated it, and changes nothing", async () => {
    await migrate(pool, { schema: "newer_named", partitionsAhead: 0 });
    const name = await migrateAsNewerVersion("newer_named", "9.4.0");
    const error = await migrate(pool, { schema: "newer_named", partitionsAhead: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaNewerThanLibraryError);
    expect((error as SchemaNewerThanLibraryError).requiredVersion).toBe("9.4.0");
    expect((error as Error).message).toContain(name);
    expect((error as Error).message).toContain(`install ${LIBRARY_PACKAGE}@9.4.0 or newer`);
    // The newer version's record stands: the refusal did not overwrite it with the older version.
    const { rows } = await pool.query("SELECT obj_description('newer_named.migrations'::regclass, 'pg_class') AS c");
    expect(rows[0].c).toBe(`migrated by ${LIBRARY_PACKAGE} 9.4.0`);
  });

  it("refuses it when no version was recorded, asking for a newer release", async () => {
    await migrate(pool, { schema: "newer_unnamed", partitionsAhead: 0 });
    await migrateAsNewerVersion("newer_unnamed", null);
    await expect(migrate(pool, { schema: "newer_unnamed", partitionsAhead: 0 })).rejects.toThrow(
      `install the newer ${LIBRARY_PACKAGE} that migrated it`,
    );
  });
});
