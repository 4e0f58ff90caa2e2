import { describe, expect, it } from "vitest";
import { COALESCE_WIDEN_AT, Pipeline } from "../coalescer";
import { EffectInFlightError, EffectKeyReuseError } from "../errors";
import { withEachEngine } from "./engine-suite";
import { appRun, type EngineDatabase } from "./engines";
import { countingPool, testEffects } from "./helpers";

let db: EngineDatabase;

withEachEngine(
  (made) => {
    if (made) db = made;
  },
  () =>
    describe("coalesced claims and completions", () => {
      it("answer each of many concurrent callers on its own, in fewer round trips, a locked key failing alone", async () => {
        const setup = testEffects(db, { coalesce: false });
        await setup.once({ tenant: "t", key: "capture:done", jobType: "j" }, () => ({ charge: "ch_done" }));
        await setup.once({ tenant: "t", key: "capture:reuse", jobType: "j", payload: { cents: 1 } }, () => "first");
        const busy = await setup.claim({ tenant: "t", key: "capture:busy", jobType: "j", lease: "60s" });
        expect(busy.kind).toBe("owned");

        // Another session holds capture:locked (a transactional claim in progress): its advisory lock on
        // PostgreSQL, its row on MariaDB.
        const holder = await db.begin();
        await appRun(holder.tx, {
          pg: "SELECT pg_advisory_xact_lock(hashtextextended('t' || chr(1) || 'capture:locked', 0))",
          mysql:
            "INSERT INTO effects (tenant_id, `key`, job_type, status, policy, owner, created_at, updated_at) VALUES ('t', 'capture:locked', 'j', 'in_progress', 'external', 'holder', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))",
        });

        const counted = countingPool(db.newPool(20));
        const effects = testEffects(counted.pool, { coalesce: true, wait: "300ms", schema: db.schema });
        try {
          const fresh = Array.from({ length: 40 }, (_, i) => `capture:fresh-${i}`);
          counted.reset();
          const [freshAnswers, done, busyAnswer, reuse, locked] = await Promise.all([
            Promise.all(fresh.map((key) => effects.claim({ tenant: "t", key, jobType: "j" }))),
            effects.claim({ tenant: "t", key: "capture:done", jobType: "j" }),
            effects.claim({ tenant: "t", key: "capture:busy", jobType: "j" }).catch((e: unknown) => e),
            effects.claim({ tenant: "t", key: "capture:reuse", jobType: "j", payload: { cents: 2 } }).catch((e: unknown) => e),
            effects.claim({ tenant: "t", key: "capture:locked", jobType: "j" }).catch((e: unknown) => e),
          ]);
          const claimTrips = counted.count();
          expect(freshAnswers.map((a) => a.kind)).toEqual(fresh.map(() => "owned"));
          expect(done).toMatchObject({ kind: "duplicate", outcome: { charge: "ch_done" } });
          expect(busyAnswer).toBeInstanceOf(EffectInFlightError);
          expect(reuse).toBeInstanceOf(EffectKeyReuseError);
          expect(locked).toBeInstanceOf(EffectInFlightError);
          // 44 callers: the fresh keys shared statements (the waiters poll on their own).
          expect(claimTrips).toBeLessThan(44);

          counted.reset();
          await Promise.all(
            freshAnswers.map((a, i) => (a.kind === "owned" ? a.claim.complete({ n: i }) : Promise.reject(new Error(a.kind)))),
          );
          expect(counted.count()).toBeLessThan(fresh.length);
          const rows = await db.rows<{ key: string; outcome: unknown }>({
            pg: "SELECT key, outcome FROM effects WHERE key LIKE 'capture:fresh-%' AND status = 'completed'",
            mysql: "SELECT `key`, outcome FROM effects WHERE `key` LIKE 'capture:fresh-%' AND status = 'completed'",
          });
          const n = (outcome: unknown) => (typeof outcome === "string" ? JSON.parse(outcome) : outcome) as { n: number };
          expect(new Map(rows.map((r) => [r.key, n(r.outcome).n]))).toEqual(new Map(fresh.map((k, i) => [k, i])));
        } finally {
          await holder.rollback();
          holder.release();
          await effects.close();
          await setup.close();
          await db.closePool(counted.pool);
        }
      });

      it("a completion of a taken-over claim is LeaseLostError beside its new owner's completion", async () => {
        const effects = testEffects(db, { coalesce: true, lease: "100ms", wait: "2s" });
        const first = await effects.claim({ tenant: "t", key: "capture:taken", jobType: "j" });
        await new Promise((r) => setTimeout(r, 250));
        const second = await effects.claim({ tenant: "t", key: "capture:taken", jobType: "j", lease: "30s" });
        if (first.kind !== "owned" || second.kind !== "owned") throw new Error("expected two owned claims");
        expect(second.claim.how).toBe("takeover");
        const [a, b] = await Promise.allSettled([first.claim.complete("old"), second.claim.complete("new")]);
        expect(a).toMatchObject({ status: "rejected", reason: { code: "LEASE_LOST" } });
        expect(b).toMatchObject({ status: "fulfilled" });
        expect((await db.effects("t", "capture:taken"))[0]?.outcome).toBe("new");
        await effects.close();
      });
    }),
  { poolSize: 20 },
);

describe("the pipeline's sends", () => {
  /** A lane whose statements answer each item with itself, after `ms`, recording each batch's size. */
  function lane(ms = 5) {
    const batches: number[] = [];
    const counts = { statements: 0, calls: 0 };
    const pipeline = new Pipeline<number, number>(
      async (items) => {
        batches.push(items.length);
        await new Promise((resolve) => setTimeout(resolve, ms));
        return items.map((value) => ({ ok: true as const, value }));
      },
      256,
      counts,
    );
    return { pipeline, batches };
  }

  it("sends the calls of one turn together: a wave woken by one reply is one statement, not one call and then the rest", async () => {
    const { pipeline, batches } = lane();
    const answers = await Promise.all([1, 2, 3, 4, 5].map((n) => pipeline.submit(n)));
    expect(answers).toEqual([1, 2, 3, 4, 5]);
    expect(batches).toEqual([5]);
  });

  it("widens a large wave across statements in flight", async () => {
    const { pipeline, batches } = lane();
    const n = 2 * COALESCE_WIDEN_AT + 3;
    const answers = await Promise.all(Array.from({ length: n }, (_, i) => pipeline.submit(i)));
    expect(answers).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(batches).toEqual([COALESCE_WIDEN_AT, COALESCE_WIDEN_AT, 3]);
  });

  it("sends a lone call before any timer or I/O of the turn runs: no added latency", async () => {
    const { pipeline, batches } = lane();
    const order: string[] = [];
    const immediate = new Promise<void>((resolve) =>
      setImmediate(() => {
        order.push(`immediate after ${batches.length} statement(s)`);
        resolve();
      }),
    );
    const answer = pipeline.submit(7);
    await immediate;
    expect(order).toEqual(["immediate after 1 statement(s)"]);
    expect(await answer).toBe(7);
    expect(batches).toEqual([1]);
  });

  it("queues what arrives while a statement is in flight and sends it together when it returns", async () => {
    const { pipeline, batches } = lane(20);
    const first = pipeline.submit(0);
    await new Promise((resolve) => setTimeout(resolve, 5)); // the first statement is in flight
    const rest = [1, 2, 3].map((n) => pipeline.submit(n));
    expect(await Promise.all([first, ...rest])).toEqual([0, 1, 2, 3]);
    expect(batches).toEqual([1, 3]);
  });
});
