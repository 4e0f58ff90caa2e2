import type pg from "pg";
import { describe, expect, it } from "vitest";
import { EffectInFlightError, EffectKeyReuseError } from "../errors";
import { withEachEngine } from "./engine-suite";
import { appRun, type EngineDatabase } from "./engines";
import { testEffects } from "./helpers";

/**
 * The read-only path for redeliveries (CLAIM_REDELIVERY): a redelivered claim of a completed effect
 * is answered from the row alone — no advisory lock, no write, no onceboard_claim — and every
 * other state still goes through onceboard_claim with the same answers as a first delivery. On
 * MariaDB the claim procedure reads a completed row the same way, before it takes any lock.
 */
let db: EngineDatabase;
let n = 0;
const uniq = (prefix: string) => `${prefix}:${++n}-${Math.random().toString(36).slice(2, 7)}`;

withEachEngine(
  (made) => {
    if (made) db = made;
  },
  (engine) =>
    describe("redelivered claims", () => {
      it("a completed effect is answered without its row lock: at once, while another transaction holds the row", async () => {
        const effects = testEffects(db, { wait: "0ms" });
        const key = uniq("capture");
        await effects.once({ tenant: "t", key, jobType: "j" }, () => ({ chargeId: "ch_1" }));
        const holder = await db.begin();
        try {
          await appRun(
            holder.tx,
            {
              pg: "SELECT 1 FROM effects WHERE tenant_id = 't' AND key = $1 FOR UPDATE",
              mysql: "SELECT 1 FROM effects WHERE tenant_id = 't' AND `key` = $1 FOR UPDATE",
            },
            [key],
          );
          for (const attempt of [1, 2]) {
            expect(await effects.claim({ tenant: "t", key, jobType: "j", attempt })).toMatchObject({
              kind: "duplicate",
              outcome: { chargeId: "ch_1" },
            });
          }
        } finally {
          await holder.rollback();
          holder.release();
          await effects.close();
        }
      });

      it.runIf(engine === "postgres")(
        "a completed effect is answered read-only: no advisory lock, no transaction id, the stored outcome",
        async () => {
          const effects = testEffects(db);
          const key = uniq("capture");
          await effects.once({ tenant: "t", key, jobType: "j", payload: { a: 1 } }, () => ({ chargeId: "ch_1" }));

          const client = await (db.pool as pg.Pool).connect();
          try {
            await client.query("BEGIN");
            const r = await effects.claim({ tenant: "t", key, jobType: "j", payload: { a: 1 }, attempt: 2, tx: client });
            const { rows } = await client.query<{ locks: number; xid: string | null }>(
              "SELECT (SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS locks, pg_current_xact_id_if_assigned()::text AS xid",
            );
            await client.query("COMMIT");
            expect(r).toMatchObject({ kind: "duplicate", outcome: { chargeId: "ch_1" }, status: "completed" });
            expect(rows[0]).toEqual({ locks: 0, xid: null });

            // The same claim as a first delivery goes through onceboard_claim, which takes the lock:
            // the probe above can tell the two paths apart.
            await client.query("BEGIN");
            const first = await effects.claim({ tenant: "t", key, jobType: "j", payload: { a: 1 }, tx: client });
            const again = await client.query<{ locks: number }>(
              "SELECT count(*)::int AS locks FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()",
            );
            await client.query("COMMIT");
            expect(first.kind).toBe("duplicate");
            expect(again.rows[0]?.locks).toBe(1);
          } finally {
            client.release();
            await effects.close();
          }
        },
      );

      it("a redelivery with another payload is key reuse; a fresh key is claimed; a live claim is in flight", async () => {
        const effects = testEffects(db, { wait: "0ms" });
        try {
          const done = uniq("done");
          await effects.once({ tenant: "t", key: done, jobType: "j", payload: { a: 1 } }, () => "ok");
          await expect(
            effects.claim({ tenant: "t", key: done, jobType: "j", payload: { a: 2 }, attempt: 3 }),
          ).rejects.toBeInstanceOf(EffectKeyReuseError);

          const fresh = uniq("fresh");
          const owned = await effects.claim({ tenant: "t", key: fresh, jobType: "j", attempt: 2 });
          expect(owned.kind).toBe("owned");
          // Still in progress with a live lease: the read-only look finds nothing, the function says in flight.
          await expect(effects.claim({ tenant: "t", key: fresh, jobType: "j", attempt: 3 })).rejects.toBeInstanceOf(
            EffectInFlightError,
          );
          if (owned.kind === "owned") await owned.claim.complete({ done: true });
          const dup = await effects.claim({ tenant: "t", key: fresh, jobType: "j", attempt: 4 });
          expect(dup).toMatchObject({ kind: "duplicate", outcome: { done: true } });
        } finally {
          await effects.close();
        }
      });

      it("an abandoned effect is a duplicate on the read-only path too", async () => {
        const effects = testEffects(db);
        try {
          const key = uniq("mail");
          const owned = await effects.claim({ tenant: "t", key, jobType: "j", policy: "atMostOnce", lease: "1s" });
          expect(owned.kind).toBe("owned");
          // Expire the lease with SQL, then a first-delivery claim marks it abandoned.
          await db.expireLease("t", key);
          expect((await effects.claim({ tenant: "t", key, jobType: "j", policy: "atMostOnce" })).kind).toBe("abandoned");
          expect(await effects.claim({ tenant: "t", key, jobType: "j", policy: "atMostOnce", attempt: 5 })).toMatchObject({
            kind: "duplicate",
            status: "abandoned",
          });
        } finally {
          await effects.close();
        }
      });
    }),
  { poolSize: 8 },
);
