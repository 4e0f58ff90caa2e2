import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { Scope } from "../auth/scope";
import { createEffects } from "../idempotency";
import { TIMELINE_BATCH_CHUNK_MIN } from "../idempotency/timeline";
import { getEffect } from "./get-effect";

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
    const effects = createEffects({
      db: db.pool,
      registry: new Registry(),
      logger: pino({ level: "silent" }),
      rollups: false,
      register: false,
      flushInterval: 0,
      workerId: "worker-batch",
    });
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
