import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";

/**
 * The claim path's functions pin their plans (sql/onceboard_claim_batch.sql says why): one generic
 * plan per session, made of index probes and nested loops whatever the statistics said when it was
 * made. Checked the way it went wrong before (migration 0013): a session caches its plans while the
 * day's partition is empty, the partition fills, and the same session's next calls must still
 * probe the index rather than scan or hash the partition.
 */
const PINNED = [
  "onceboard_claim",
  "onceboard_claim_batch",
  "onceboard_complete_batch",
  "onceboard_fail_batch",
  "onceboard_apply_duplicates",
];
const PIN_SETTINGS = [
  "plan_cache_mode=force_generic_plan",
  "enable_seqscan=off",
  "enable_bitmapscan=off",
  "enable_hashjoin=off",
  "enable_mergejoin=off",
];

let db: TestDatabase;
let session: pg.Client;
const plans: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 2 });
  session = new pg.Client(db.url);
  await session.connect();
  // auto_explain prints each nested statement's plan to this session as a LOG notice.
  session.on("notice", (notice) => {
    if (notice.message?.includes("Query Text:")) plans.push(notice.message);
  });
  await session.query("LOAD 'auto_explain'");
  await session.query("SET auto_explain.log_min_duration = 0");
  await session.query("SET auto_explain.log_nested_statements = on");
  await session.query("SET client_min_messages = log");
});
afterAll(async () => {
  await session?.end();
  await db?.drop();
});

const tenants = (n: number) => Array.from({ length: n }, () => "plans");

async function claimBatch(keys: string[]) {
  const { rows } = await session.query<{ ord: number; result: string; created_at: Date; owner: string; attempt: number }>(
    `SELECT b.ord, (b.claim).result, (b.claim).created_at, (b.claim).owner, (b.claim).attempt
       FROM onceboard.onceboard_claim_batch($1::text[], $2::text[], 'plans', 'external', $3::text[], $4::text[],
                                            $5::text[], 30000, 1000, $6::boolean[], false) b ORDER BY b.ord`,
    [
      tenants(keys.length),
      keys,
      keys.map((k) => `owner-${k}`),
      keys.map((k) => `m-${k}`),
      keys.map(() => null),
      keys.map(() => false),
    ],
  );
  return rows;
}

async function completeBatch(rows: { created_at: Date; owner: string; attempt: number }[], keys: string[]) {
  await session.query(
    `SELECT * FROM onceboard.onceboard_complete_batch($1::text[], $2::text[], $3::timestamptz[], $4::text[], $5::int[], $6::jsonb[], $7::text[])`,
    [
      tenants(keys.length),
      keys,
      rows.map((r) => r.created_at),
      rows.map((r) => r.owner),
      rows.map((r) => r.attempt),
      keys.map(() => '{"ok":true}'),
      keys.map(() => null),
    ],
  );
}

describe("the claim path's plans are pinned", () => {
  it("each function carries the pins", async () => {
    const { rows } = await db.pool.query<{ name: string; config: string[] | null }>(
      "SELECT p.proname AS name, p.proconfig AS config FROM pg_proc p WHERE p.proname = ANY($1::text[])",
      [PINNED],
    );
    expect(rows.map((r) => r.name).sort()).toEqual([...PINNED].sort());
    for (const row of rows) expect({ name: row.name, config: row.config }).toEqual({ name: row.name, config: PIN_SETTINGS });
  });

  it("a session whose plans were cached on an empty partition still probes the index once it has filled", async () => {
    // Cached while the day's partition is empty (first calls of this session).
    for (let round = 0; round < 6; round++) {
      const keys = [`step:empty-${round}-a`, `step:empty-${round}-b`];
      await completeBatch(await claimBatch(keys), keys);
    }
    // The partition fills (another connection) and is analyzed: a plan chosen now would differ.
    await db.pool.query(`
      INSERT INTO onceboard.effects (tenant_id, key, job_type, status, policy, owner, created_at, updated_at)
      SELECT 'plans', 'step:filler-' || g, 'plans', 'completed', 'external', 'filler', now(), now()
        FROM generate_series(1, 20000) g`);
    await db.pool.query("ANALYZE onceboard.effects");

    plans.length = 0;
    const keys = ["step:full-a", "step:full-b", "step:filler-7"];
    const claimed = await claimBatch(keys);
    expect(claimed.map((r) => r.result)).toEqual(["claimed", "claimed", "duplicate"]);
    await completeBatch(claimed.slice(0, 2), keys.slice(0, 2));
    // The filler's created_at has microseconds (now()), which a Date would drop: named as text.
    const { rows: filler } = await db.pool.query<{ created_at: string }>(
      "SELECT created_at::text AS created_at FROM onceboard.effects WHERE tenant_id = 'plans' AND key = $1",
      [keys[2]],
    );
    const { rows: applied } = await session.query<{ updated: number }>(
      "SELECT onceboard.onceboard_apply_duplicates($1::jsonb) AS updated",
      [
        JSON.stringify([
          { tenant_id: "plans", key: keys[2], created_at: filler[0]?.created_at, n: 1, last_at: new Date(), max_gap: 1 },
        ]),
      ],
    );
    expect(applied[0]?.updated).toBe(1);

    const onEffects = plans.filter((p) => /\beffects_p\d{8}\b/.test(p));
    expect(onEffects.length).toBeGreaterThanOrEqual(3); // the batch's look, the completion, the ledger
    for (const plan of onEffects) {
      expect(plan).toMatch(/Index Scan using effects_p\d{8}_tenant_key_uq/);
      expect(plan).not.toMatch(/Seq Scan on effects_p|Hash|Bitmap Heap Scan on effects_p|Merge Join/);
    }
  });
});
