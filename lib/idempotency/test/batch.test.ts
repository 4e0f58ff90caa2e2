import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { EffectInFlightError, EffectKeyReuseError, InvalidEffectKeyError } from "../index";
import { countingPool, testEffects } from "./helpers";

let db: TestDatabase;
let n = 0;
const uniq = (prefix: string) => `${prefix}:${++n}-${Math.random().toString(36).slice(2, 7)}`;

beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 12 });
});
afterAll(async () => {
  await db?.drop();
});

describe("effects.claimMany (batched claims)", () => {
  it("answers each key on its own, in one round trip: fresh, duplicate, key reuse, in flight, the same key twice, an invalid key", async () => {
    const counted = countingPool(db.pool);
    const effects = testEffects(counted.pool);
    try {
      const done = uniq("capture");
      await effects.once({ tenant: "t", key: done, jobType: "j", payload: { a: 1 } }, () => ({ chargeId: "ch_1" }));
      const reused = uniq("capture");
      await effects.once({ tenant: "t", key: reused, jobType: "j", payload: { a: 1 } }, () => "ok");
      const live = uniq("capture");
      expect((await effects.claim({ tenant: "t", key: live, jobType: "j" })).kind).toBe("owned");
      const fresh = [uniq("capture"), uniq("capture"), uniq("capture")];
      const twice = uniq("capture");

      counted.reset();
      const answers = await effects.claimMany([
        { tenant: "t", key: fresh[0] ?? "", jobType: "j" },
        { tenant: "t", key: done, jobType: "j", payload: { a: 1 } },
        { tenant: "t", key: reused, jobType: "j", payload: { a: 2 } },
        { tenant: "t", key: fresh[1] ?? "", jobType: "j" },
        { tenant: "t", key: live, jobType: "j" },
        { tenant: "t", key: twice, jobType: "j" },
        { tenant: "t", key: twice, jobType: "j" },
        { tenant: "t", key: "no step prefix", jobType: "j" },
        { tenant: "u", key: fresh[2] ?? "", jobType: "j" },
      ]);
      expect(counted.count()).toBe(1);
      expect(answers.map((a) => a.kind)).toEqual([
        "owned",
        "duplicate",
        "error",
        "owned",
        "error",
        "owned",
        "error",
        "error",
        "owned",
      ]);
      expect(answers[1]).toMatchObject({ kind: "duplicate", outcome: { chargeId: "ch_1" } });
      const errorOf = (i: number) => {
        const a = answers[i];
        return a?.kind === "error" ? a.error : null;
      };
      expect(errorOf(2)).toBeInstanceOf(EffectKeyReuseError);
      expect(errorOf(4)).toBeInstanceOf(EffectInFlightError);
      expect(errorOf(6)).toBeInstanceOf(EffectInFlightError);
      expect(errorOf(7)).toBeInstanceOf(InvalidEffectKeyError);

      // Owned claims are real claims: completing one makes the next claim a duplicate.
      for (const a of answers) if (a.kind === "owned") await a.claim.complete({ ok: true });
      const again = await effects.claim({ tenant: "t", key: fresh[0] ?? "", jobType: "j", attempt: 2 });
      expect(again).toMatchObject({ kind: "duplicate", outcome: { ok: true } });
      const { rows } = await db.pool.query("SELECT count(*)::int AS n FROM effects WHERE key = $1", [twice]);
      expect(rows[0].n).toBe(1);
    } finally {
      await effects.close();
    }
  });

  it("concurrent batches and single claims over the same keys, in different orders, own each key exactly once and never deadlock", async () => {
    const effects = testEffects(db.pool, { wait: "5s" });
    try {
      const keys = Array.from({ length: 40 }, () => uniq("capture"));
      const shuffled = (seed: number) =>
        [...keys].sort(
          (a, b) =>
            ((a.length * seed + a.charCodeAt(a.length - 1)) % 7) - ((b.length * seed + b.charCodeAt(b.length - 1)) % 7) ||
            (seed % 2 ? a.localeCompare(b) : b.localeCompare(a)),
        );
      const owners = new Map<string, number>();
      const own = (key: string) => owners.set(key, (owners.get(key) ?? 0) + 1);
      const batches = Array.from({ length: 6 }, async (_, s) => {
        const order = shuffled(s + 1);
        const answers = await effects.claimMany(order.map((key) => ({ tenant: "t", key, jobType: "j" })));
        for (const [i, a] of answers.entries()) {
          if (a.kind === "owned") {
            own(order[i] ?? "");
            await a.claim.complete({ by: "batch" });
          } else if (a.kind === "error" && !(a.error instanceof EffectInFlightError)) throw a.error;
        }
      });
      const singles = keys.slice(0, 20).map(async (key) => {
        const r = await effects.claim({ tenant: "t", key, jobType: "j" }).catch((e) => {
          if (e instanceof EffectInFlightError) return null;
          throw e;
        });
        if (r?.kind === "owned") {
          own(key);
          await r.claim.complete({ by: "single" });
        }
      });
      await Promise.all([...batches, ...singles]);
      for (const key of keys) expect({ key, owned: owners.get(key) ?? 0 }).toEqual({ key, owned: 1 });
    } finally {
      await effects.close();
    }
  });
});
