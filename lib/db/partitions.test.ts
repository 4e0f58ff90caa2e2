import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { ensureEffectPartitions, utcDay } from "./partitions";

describe("effects partitions", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  const insertAt = (createdAt: string) =>
    db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, created_at) VALUES ('t1', $1, 'test', 'completed', 'once', $2)`,
      [`k-${createdAt}`, createdAt],
    );

  it("covers yesterday through seven days ahead", async () => {
    const { rows } = await db.pool.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'effects'::regclass ORDER BY 1`,
    );
    const names = rows.map((r) => r.name);
    const partition = (offset: number) => `effects_p${utcDay(new Date(), offset).replaceAll("-", "")}`;
    for (let offset = -1; offset <= 6; offset++) expect(names).toContain(partition(offset));
    // The test database is cloned from a template migrated when the run began: a run that crosses
    // UTC midnight finds the window made the day before (two days back through six ahead).
    expect(names.includes(partition(7)) || names.includes(partition(-2))).toBe(true);
    expect(names).not.toContain("effects_default");
  });

  it("refuses an effect dated outside the premade partitions with a clear error", async () => {
    await expect(insertAt("2001-01-01T00:00:00Z")).rejects.toThrow(/no partition of relation "effects" found for row/);
    await expect(insertAt(new Date().toISOString())).resolves.toBeTruthy();
  });

  it("is idempotent and safe to run concurrently", async () => {
    const far = new Date(Date.now() + 40 * 86_400_000);
    const created = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const client = await db.pool.connect();
        try {
          return await ensureEffectPartitions(client, { now: far, back: 0, ahead: 3 });
        } finally {
          client.release();
        }
      }),
    );
    expect(created.reduce((a, b) => a + b, 0)).toBe(4);
    expect(await ensureEffectPartitions(db.pool, { now: far, back: 0, ahead: 3 })).toBe(0);
  });

  it("catches a same-partition duplicate with the per-partition unique index", async () => {
    const now = new Date().toISOString();
    await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, created_at) VALUES ('t1', 'dup', 'test', 'completed', 'once', $1)`,
      [now],
    );
    const again = await db.pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, created_at) VALUES ('t1', 'dup', 'test', 'completed', 'once', $1)
       ON CONFLICT DO NOTHING RETURNING key`,
      [new Date(Date.parse(now) + 1).toISOString()],
    );
    expect(again.rowCount).toBe(0);
  });
});
