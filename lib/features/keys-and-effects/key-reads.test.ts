import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { Scope } from "../../auth/scope";
import { ensureEffectPartitions } from "../../db/partitions";
import { getEffect } from "./get-effect";
import { searchEffects } from "./search-effects";

/**
 * The Keys read models on a few rows spread over several daily partitions: pages are walked
 * newest first through the partitions and never skip or repeat a row (equal created_at included),
 * and a key's steps are the tenant's effects first claimed by its messages within 3 days.
 */
const NOW = new Date("2026-11-20T12:00:00.000Z");
const at = (daysBack: number, seconds = 0) => new Date(NOW.getTime() - daysBack * 86_400_000 + seconds * 1000);

describe("Keys read models", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await ensureEffectPartitions(db.pool, { back: 8, ahead: 1, now: NOW });
    const rows: [tenant: string, key: string, jobType: string, status: string, message: string, createdAt: Date][] = [
      ["acme", "capture:ord-7", "capture", "completed", "m-7", at(6)],
      ["acme", "mark-paid:ord-7", "mark-paid", "completed", "m-7", at(4)], // 2 days after the capture
      ["acme", "receipt:ord-7", "receipt", "in_progress", "m-7", at(1, -60)], // 5 days after the capture, 3 days less 1 min after mark-paid
      ["acme", "capture:ord-8", "capture", "completed", "m-8", at(3)],
      ["acme", "b:same-instant", "capture", "completed", "m-9", at(2)],
      ["acme", "a:same-instant", "capture", "completed", "m-9", at(2)],
      ["acme", "z:ORD-7-refund", "refund", "failed", "m-10", at(1)],
      ["globex", "mark-paid:ord-7b", "mark-paid", "completed", "m-7", at(5)], // same message id, other tenant
    ];
    for (const [tenant, key, jobType, status, message, createdAt] of rows) {
      await db.pool.query(
        `INSERT INTO effects (tenant_id, key, job_type, status, policy, first_message_id, last_message_id, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'external', $5, $5, $6, $6)`,
        [tenant, key, jobType, status, message, createdAt],
      );
    }
  });
  afterAll(async () => {
    await db.drop();
  });

  it("pages newest first across partitions, with equal times ordered by key, each row once", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const result = await searchEffects(Scope.operator(), { tenant: "acme", limit: 2, cursor, now: NOW }, db.pool);
      seen.push(...result.effects.map((e) => e.key));
      if (!result.nextCursor) break;
      cursor = result.nextCursor;
    }
    expect(seen).toEqual([
      "z:ORD-7-refund",
      "receipt:ord-7",
      "b:same-instant",
      "a:same-instant",
      "capture:ord-8",
      "mark-paid:ord-7",
      "capture:ord-7",
    ]);
  });

  it("finds a fragment anywhere in the key, case-insensitively, within the tenant and the filters", async () => {
    const keys = async (search: Partial<Parameters<typeof searchEffects>[1]>) =>
      (await searchEffects(Scope.operator(), { tenant: "acme", limit: 50, now: NOW, ...search }, db.pool)).effects.map(
        (e) => e.key,
      );
    expect(await keys({ q: "ord-7" })).toEqual(["z:ORD-7-refund", "receipt:ord-7", "mark-paid:ord-7", "capture:ord-7"]);
    expect(await keys({ q: "ord-7", status: "completed" })).toEqual(["mark-paid:ord-7", "capture:ord-7"]);
    expect(await keys({ q: "ord-7", jobType: "refund" })).toEqual(["z:ORD-7-refund"]);
    expect(await keys({ q: "ord-7", from: at(4, -1), to: at(2) })).toEqual(["mark-paid:ord-7"]);
    expect(await keys({ q: "ord-7b" })).toEqual([]);
    expect(await keys({ q: "%" })).toEqual([]);
  });

  it("a platform search naming no tenant spans every tenant, each row naming its own, paged without skip or repeat", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const result = await searchEffects(Scope.operator(), { q: "ord-7", limit: 2, cursor, now: NOW }, db.pool);
      expect(result.tenant).toBeNull();
      seen.push(...result.effects.map((e) => `${e.tenant}/${e.key}`));
      if (!result.nextCursor) break;
      cursor = result.nextCursor;
    }
    expect(seen).toEqual([
      "acme/z:ORD-7-refund",
      "acme/receipt:ord-7",
      "acme/mark-paid:ord-7",
      "globex/mark-paid:ord-7b",
      "acme/capture:ord-7",
    ]);
    // A tenant session asking for no tenant, or for another, still searches only its own.
    const own = Scope.ofPrincipal({ tenantId: "globex" });
    for (const tenant of [undefined, "acme"]) {
      const result = await searchEffects(own, { tenant, q: "ord-7", limit: 50, now: NOW }, db.pool);
      expect(result.tenant).toBe("globex");
      expect(result.effects.map((e) => `${e.tenant}/${e.key}`)).toEqual(["globex/mark-paid:ord-7b"]);
    }
  });

  it("a key's steps: the tenant's effects first claimed by its message, within 3 days of it", async () => {
    const capture = await getEffect(Scope.operator(), { tenant: "acme", key: "capture:ord-7", now: NOW }, db.pool);
    expect(capture?.steps.map((s) => s.key)).toEqual(["capture:ord-7", "mark-paid:ord-7"]);
    const markPaid = await getEffect(Scope.operator(), { tenant: "acme", key: "mark-paid:ord-7", now: NOW }, db.pool);
    expect(markPaid?.steps.map((s) => s.key)).toEqual(["capture:ord-7", "mark-paid:ord-7", "receipt:ord-7"]);
    expect(markPaid?.steps[2]).toMatchObject({ status: "in_progress", jobType: "receipt", createdAt: at(1, -60).toISOString() });
    expect(await getEffect(Scope.operator(), { tenant: "globex", key: "capture:ord-7", now: NOW }, db.pool)).toBeNull();
  });

  it("finds a key whatever day it was claimed: the last two days are read first, the older days when they hold none", async () => {
    const read = (tenant: string, key: string, now = NOW) => getEffect(Scope.operator(), { tenant, key, now }, db.pool);
    // Yesterday (the recent branch), exactly two days back (the boundary: the older branch), and 3 and 6 days back.
    for (const [key, createdAt] of [
      ["z:ORD-7-refund", at(1)],
      ["receipt:ord-7", at(1, -60)],
      ["b:same-instant", at(2)],
      ["capture:ord-8", at(3)],
      ["capture:ord-7", at(6)],
    ] as const) {
      expect((await read("acme", key))?.createdAt, key).toBe(createdAt.toISOString());
    }
    // Seen five days later, yesterday's key is an old one and is still found; from before it was claimed, it is not.
    expect((await read("acme", "z:ORD-7-refund", at(-5)))?.createdAt).toBe(at(1).toISOString());
    expect(await read("acme", "z:ORD-7-refund", at(1, -120))).toBeNull();
    // Another tenant's key and a missing key answer the same nothing.
    expect(await read("globex", "z:ORD-7-refund")).toBeNull();
    expect(await read("acme", "no-such-key")).toBeNull();
  });
});
