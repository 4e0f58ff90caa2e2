import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { Scope } from "../auth/scope";
import { createEffects } from "../idempotency";
import { getEffect } from "./get-effect";

/**
 * The key's timeline as the console reads it (get-effect.ts), from deliveries the real library
 * recorded: oldest first with the gaps between, the first delivery marked, only the scope's tenant.
 */
describe("the key's delivery timeline", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    const effects = createEffects({
      db: db.pool,
      registry: new Registry(),
      logger: pino({ level: "silent" }),
      rollups: false,
      register: false,
      flushInterval: 0,
      workerId: "worker-1",
    });
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
