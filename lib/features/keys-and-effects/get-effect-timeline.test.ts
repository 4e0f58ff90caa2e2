import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { Scope } from "../../auth/scope";
import { createEffects } from "../../idempotency";
import { EffectKeyReuseError } from "../../idempotency/errors";
import { TIMELINE_BATCH_CHUNK_MIN } from "../../idempotency/timeline";
import { getEffect } from "./get-effect";

/** The real library, quiet, writing its timeline on every flush(), as worker `workerId`. */
const timelineEffects = (db: TestDatabase, workerId: string) =>
  createEffects({
    db: db.pool,
    registry: new Registry(),
    logger: pino({ level: "silent" }),
    rollups: false,
    register: false,
    flushInterval: 0,
    workerId,
  });

/**
 * The key's timeline as the console reads it (get-effect.ts), from deliveries the real library
 * recorded: oldest first with the gaps between, the first delivery marked, only the scope's tenant.
 */
describe("the key's delivery timeline", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    const effects = timelineEffects(db, "worker-1");
    await effects.once({ tenant: "acme", key: "capture:ord-1", jobType: "capture", messageId: "m-1" }, () => "ok");
    await effects.once({ tenant: "acme", key: "capture:ord-1", jobType: "capture", messageId: "m-1", attempt: 2 }, () => "again");
    await effects.once({ tenant: "globex", key: "capture:ord-1", jobType: "capture", messageId: "g-1" }, () => "theirs");
    await effects.close();
  });
  afterAll(async () => {
    await db.drop();
  });

  it("lists the tenant's deliveries oldest first, the first one marked, with the gap since the one before", async () => {
    const detail = await getEffect(Scope.ofPrincipal({ tenantId: "acme" }), { key: "capture:ord-1" }, db.pool);
    expect(detail?.timelineTotal).toBe(2);
    const timeline = detail?.timeline ?? [];
    expect(timeline.map((d) => [d.answer, d.messageId, d.deliveryAttempt, d.first, d.worker])).toEqual([
      ["claimed", "m-1", null, true, "worker-1"],
      ["duplicate", "m-1", 2, false, "worker-1"],
    ]);
    expect(timeline[0]?.gapSeconds).toBeNull();
    expect(timeline[1]?.gapSeconds).toBeGreaterThanOrEqual(0);
    expect(timeline[0]?.deliveredAt).toBe(detail?.createdAt);
  });

  it("never shows another tenant's deliveries of the same key", async () => {
    const detail = await getEffect(Scope.ofPrincipal({ tenantId: "globex" }), { key: "capture:ord-1" }, db.pool);
    expect(detail?.timeline.map((d) => d.messageId)).toEqual(["g-1"]);
  });
});

/**
 * Chunks store a column their deliveries share once (migration 0015): the key page still reads
 * every delivery's own values, from a batch's collapsed chunk and from a chunk of mixed tenants
 * and answers.
 */
describe("the key's timeline from chunks with shared columns", () => {
  let db: TestDatabase;
  const chunkShapes = () =>
    db.pool.query<{ first: boolean; keys: number; tenants: number; answers: number; created: number; messages: number }>(
      `SELECT later_keys IS NULL AS first, cardinality(keys) AS keys, cardinality(tenants) AS tenants,
              cardinality(answers) AS answers, cardinality(effect_created_at) AS created, cardinality(message_ids) AS messages
         FROM delivery_timeline WHERE worker_id = 'worker-2' ORDER BY first_at, cardinality(keys)`,
    );
  beforeAll(async () => {
    db = await createTestDatabase();
    const effects = timelineEffects(db, "worker-2");
    try {
      await effects.once({ tenant: "globex", key: "capture:g", jobType: "capture", messageId: "g-1" }, () => "theirs");
      await effects.once({ tenant: "acme", key: "pay:p", jobType: "pay", messageId: "p-1", payload: { cents: 1 } }, () => 1);
      await effects.flush();
      // One statement: its first deliveries share all but their keys and message ids.
      const batch = ["b-1", "b-2", "b-3"].map((k) => ({
        tenant: "acme",
        key: `capture:${k}`,
        jobType: "capture",
        messageId: `m-${k}`,
      }));
      await effects.onceMany(batch, () => "ran");
      await effects.flush();
      // One flush of later deliveries of two tenants, three keys and two answers: one chunk.
      await effects.once({ tenant: "acme", key: "capture:b-1", jobType: "capture", messageId: "m-b-1", attempt: 2 }, () => "x");
      await effects.once({ tenant: "globex", key: "capture:g", jobType: "capture", messageId: "g-1", attempt: 3 }, () => "x");
      await expect(
        effects.once({ tenant: "acme", key: "pay:p", jobType: "pay", messageId: "p-2", payload: { cents: 2 } }, () => 2),
      ).rejects.toBeInstanceOf(EffectKeyReuseError);
      await effects.flush();
    } finally {
      await effects.close();
    }
  });
  afterAll(async () => {
    await db.drop();
  });

  it("writes the batch's chunk with its shared columns once and the mixed chunk per delivery", async () => {
    const { rows } = await chunkShapes();
    expect(rows).toContainEqual({ first: true, keys: 3, tenants: 1, answers: 1, created: 0, messages: 3 });
    expect(rows).toContainEqual({ first: false, keys: 3, tenants: 3, answers: 3, created: 3, messages: 3 });
  });

  it("reads every delivery of a collapsed chunk back with its own key, message and instant", async () => {
    for (const k of ["b-1", "b-2", "b-3"]) {
      const detail = await getEffect(Scope.ofPrincipal({ tenantId: "acme" }), { key: `capture:${k}` }, db.pool);
      const first = detail?.timeline[0];
      expect(first).toMatchObject({
        answer: "claimed",
        messageId: `m-${k}`,
        deliveryAttempt: null,
        effectAttempt: 1,
        worker: "worker-2",
        first: true,
        deliveredAt: detail?.createdAt,
      });
      expect(first?.claimMs).toBeGreaterThan(0);
    }
    const other = await getEffect(Scope.ofPrincipal({ tenantId: "acme" }), { key: "capture:b-2" }, db.pool);
    expect(other?.timelineTotal).toBe(1);
  });

  it("reads a chunk of mixed tenants and answers back per delivery, each on its own key's page", async () => {
    const page = async (tenantId: string, key: string) => {
      const detail = await getEffect(Scope.ofPrincipal({ tenantId }), { key }, db.pool);
      return detail?.timeline.map((d) => [d.answer, d.messageId, d.deliveryAttempt, d.first]);
    };
    expect(await page("acme", "capture:b-1")).toEqual([
      ["claimed", "m-b-1", null, true],
      ["duplicate", "m-b-1", 2, false],
    ]);
    expect(await page("globex", "capture:g")).toEqual([
      ["claimed", "g-1", null, true],
      ["duplicate", "g-1", 3, false],
    ]);
    expect(await page("acme", "pay:p")).toEqual([
      ["claimed", "p-1", null, true],
      ["key_reuse", "p-2", null, false],
    ]);
  });
});

/**
 * A batched claim (claimMany) of TIMELINE_BATCH_CHUNK_MIN keys and more is recorded as one entry
 * and written as a chunk of its own, its instant and claim time stored once: the key page still
 * reads every key's delivery with its own message and attempt, and the key the batch found
 * completed keeps both its deliveries.
 */
describe("the key's timeline after a batched claim", () => {
  let db: TestDatabase;
  const n = TIMELINE_BATCH_CHUNK_MIN + 5;
  const keys = Array.from({ length: n }, (_, i) => `capture:batch-${i}`);
  beforeAll(async () => {
    db = await createTestDatabase();
    const effects = timelineEffects(db, "worker-batch");
    try {
      await effects.once({ tenant: "acme", key: "capture:batch-0", jobType: "capture", messageId: "early" }, () => "done");
      const answers = await effects.claimMany(
        keys.map((key, i) => ({ tenant: "acme", key, jobType: "capture", messageId: `m-${i}`, attempt: i % 2 === 0 ? 1 : 2 })),
      );
      expect(answers.map((a) => a.kind)).toEqual(["duplicate", ...keys.slice(1).map(() => "owned")]);
      expect(await effects.flush()).toBe(true);
    } finally {
      await effects.close();
    }
  });
  afterAll(async () => {
    await db.drop();
  });

  it("writes the statement's first deliveries as one chunk, instant and claim time once", async () => {
    const { rows } = await db.pool.query(
      `SELECT cardinality(keys) AS keys, cardinality(delivered_at) AS delivered_at, cardinality(claim_ms) AS claim_ms,
              cardinality(message_ids) AS message_ids, first_at = last_at AS one_instant
         FROM delivery_timeline WHERE worker_id = 'worker-batch' AND later_keys IS NULL AND cardinality(keys) > 1`,
    );
    expect(rows).toEqual([{ keys: n - 1, delivered_at: 1, claim_ms: 1, message_ids: n - 1, one_instant: true }]);
  });

  it("reads every key's first delivery back with its own message and attempt, at its effect's creation", async () => {
    for (const [i, key] of keys.entries()) {
      if (i === 0) continue;
      const detail = await getEffect(Scope.ofPrincipal({ tenantId: "acme" }), { key }, db.pool);
      expect(detail?.timelineTotal).toBe(1);
      expect(detail?.timeline[0]).toMatchObject({
        answer: "claimed",
        messageId: `m-${i}`,
        deliveryAttempt: i % 2 === 0 ? 1 : 2,
        effectAttempt: 1,
        worker: "worker-batch",
        first: true,
        deliveredAt: detail?.createdAt,
      });
      expect(detail?.timeline[0]?.claimMs).toBeGreaterThan(0);
    }
  });

  it("keeps the batch's duplicate beside the key's first delivery", async () => {
    const detail = await getEffect(Scope.ofPrincipal({ tenantId: "acme" }), { key: "capture:batch-0" }, db.pool);
    expect(detail?.timeline.map((d) => [d.answer, d.messageId, d.deliveryAttempt, d.first])).toEqual([
      ["claimed", "early", null, true],
      ["duplicate", "m-0", 1, false],
    ]);
  });
});

/**
 * An effect created at an instant finer than a millisecond (the library truncates its own to the
 * millisecond; another writer may not) still finds the delivery that made it: the lookup hands the
 * effect's creation to its second statement exactly, not through a JavaScript Date.
 */
describe("the timeline of an effect created between two milliseconds", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    const effects = timelineEffects(db, "worker-3");
    await effects.once({ tenant: "acme", key: "capture:ord-micro", jobType: "capture", messageId: "m-1" }, () => "ok");
    await effects.close();
    const shift = "interval '123 microseconds'";
    const shifted = (column: string) => `ARRAY(SELECT x + ${shift} FROM unnest(${column}) WITH ORDINALITY AS u(x, n) ORDER BY n)`;
    await db.pool.query(`UPDATE effects SET created_at = created_at + ${shift}, updated_at = updated_at + ${shift}`);
    await db.pool.query(
      `UPDATE delivery_timeline SET first_at = first_at + ${shift}, last_at = last_at + ${shift},
              delivered_at = ${shifted("delivered_at")}, effect_created_at = ${shifted("effect_created_at")}`,
    );
  });
  afterAll(async () => {
    await db.drop();
  });

  it("marks the claim that made it as the first delivery", async () => {
    const { rows } = await db.pool.query<{ micros: number }>(
      "SELECT extract(microseconds FROM created_at)::int % 1000 AS micros FROM effects",
    );
    expect(rows).toEqual([{ micros: 123 }]);
    const detail = await getEffect(Scope.ofPrincipal({ tenantId: "acme" }), { key: "capture:ord-micro" }, db.pool);
    expect(detail?.timeline.map((d) => [d.answer, d.messageId, d.first])).toEqual([["claimed", "m-1", true]]);
    expect(detail?.timelineTotal).toBe(1);
  });
});
