import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { dumpSchema } from "./schema-dump";

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
      expect(after).toContain("CREATE INDEX schema_dump_probe_idx ON public.audit_log USING btree (actor);");
    } finally {
      await db.pool.query("DROP INDEX schema_dump_probe_idx");
    }
  });
});
