import type pg from "pg";
import { describe, expect, it } from "vitest";
import { testPrismaClient } from "../../../test/prisma";
import { releaseClaim, settleRelease } from "../admin";
import type { TransactionHandle } from "../db";
import type { MysqlPoolLike } from "../mysql";
import type { ReleaseInput } from "../release";
import { withEachEngine } from "./engine-suite";
import { appRun, type EngineDatabase } from "./engines";
import { sleep, testEffects } from "./helpers";

let db: EngineDatabase;
let n = 0;
const uniq = (prefix: string) => `${prefix}-${++n}-${Math.random().toString(36).slice(2, 7)}`;

/** releaseClaim in the test database's library schema. */
const release = (handle: unknown, input: Omit<ReleaseInput, "schema">) =>
  releaseClaim(handle as TransactionHandle, { ...input, schema: db.schema });

/** A claim whose worker is gone (or still running): in progress, its lease ending `leaseSeconds` from now. */
async function stuck(key: string, leaseSeconds: number, policy = "external") {
  await db.run(
    {
      pg: `INSERT INTO effects (tenant_id, key, job_type, status, policy, owner, attempt, lease_until, created_at)
     VALUES ('acme', $1, 'capture', 'in_progress', $2, 'w1:dead', 1, now() + make_interval(secs => $3), date_trunc('milliseconds', now()))`,
      mysql: `INSERT INTO effects (tenant_id, \`key\`, job_type, status, policy, owner, attempt, lease_until, created_at, updated_at)
     VALUES ('acme', $1, 'capture', 'in_progress', $2, 'w1:dead', 1, UTC_TIMESTAMP(3) + INTERVAL $3 SECOND, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))`,
    },
    [key, policy, leaseSeconds],
  );
}

const statusOf = async (key: string) => {
  const [row] = await db.effects("acme", key);
  return row && { status: row.status, error: row.error };
};

withEachEngine(
  (made) => {
    if (made) db = made;
  },
  (engine) =>
    describe("releaseClaim (the library's release of a stuck claim)", () => {
      it("releases an expired in-progress claim as failed, and the next delivery takes it over as attempt 2", async () => {
        const key = uniq("capture:expired");
        await stuck(key, -60);
        expect(await release(db.pool, { tenant: "acme", key, releasedBy: "ops" })).toEqual({ released: true, attempt: 1 });
        expect(await statusOf(key)).toEqual({
          status: "failed",
          error: "released by ops after the lease of attempt 1 (w1:dead) expired",
        });
        const effects = testEffects(db);
        const again = await effects.once({ tenant: "acme", key, jobType: "capture" }, () => "ran");
        expect(again).toMatchObject({ result: "ran", attempt: 2, resumed: true });
        await effects.close();
      });

      it("refuses a live lease (unless forced), an at-most-once step, a completed effect and a missing key, saying why", async () => {
        const live = uniq("capture:live");
        await stuck(live, 3600);
        expect(await release(db.pool, { tenant: "acme", key: live, releasedBy: "ops" })).toMatchObject({
          released: false,
          reason: "lease_alive",
          effect: { status: "in_progress", owner: "w1:dead", attempt: 1 },
        });
        expect(await release(db.pool, { tenant: "acme", key: live, releasedBy: "ops", force: true })).toEqual({
          released: true,
          attempt: 1,
        });
        expect((await statusOf(live))?.error).toBe("released by ops while the lease of attempt 1 (w1:dead) was alive");
        expect(await release(db.pool, { tenant: "acme", key: live, releasedBy: "ops" })).toMatchObject({
          released: false,
          reason: "not_in_progress",
        });

        const amo = uniq("send:amo");
        await stuck(amo, -60, "at_most_once");
        expect(await release(db.pool, { tenant: "acme", key: amo, releasedBy: "ops", force: true })).toMatchObject({
          released: false,
          reason: "at_most_once",
        });
        const effects = testEffects(db);
        const done = uniq("capture:done");
        await effects.once({ tenant: "acme", key: done, jobType: "capture" }, () => 1);
        await effects.close();
        expect(await release(db.pool, { tenant: "acme", key: done, releasedBy: "ops" })).toMatchObject({
          released: false,
          reason: "completed",
        });
        expect(await release(db.pool, { tenant: "acme", key: "no step prefix", releasedBy: "ops" })).toEqual({
          released: false,
          reason: "not_found",
          effect: null,
        });
      });

      it("waits for the claim's lock: a claimer holding it is never interleaved with", async () => {
        const key = uniq("capture:locked");
        await stuck(key, -60);
        const holder = await db.begin();
        try {
          // What a claim takes before it looks at the row: onceboard_claim's advisory lock; the row's lock on MariaDB.
          await appRun(
            holder.tx,
            {
              pg: "SELECT pg_advisory_xact_lock(hashtextextended($1 || chr(1) || $2, 0))",
              mysql: "SELECT 1 FROM effects WHERE tenant_id = $1 AND `key` = $2 FOR UPDATE",
            },
            ["acme", key],
          );
          let settled = false;
          const released = release(db.pool, { tenant: "acme", key, releasedBy: "ops" }).finally(() => {
            settled = true;
          });
          await sleep(300);
          expect(settled).toBe(false);
          await holder.commit();
          expect(await released).toEqual({ released: true, attempt: 1 });
        } finally {
          holder.release();
        }
      });

      it("runs in the caller's transaction: a rollback there undoes the release, a commit keeps it", async () => {
        const key = uniq("capture:caller");
        await stuck(key, -60);
        const rolledBack = await db.begin();
        try {
          expect(await release(rolledBack.tx, { tenant: "acme", key, releasedBy: "ops" })).toEqual({
            released: true,
            attempt: 1,
          });
          await rolledBack.rollback();
        } finally {
          rolledBack.release();
        }
        expect((await statusOf(key))?.status).toBe("in_progress");
        const committed = await db.begin();
        try {
          expect(await release(committed.tx, { tenant: "acme", key, releasedBy: "ops" })).toEqual({ released: true, attempt: 1 });
          await committed.commit();
        } finally {
          committed.release();
        }
        expect((await statusOf(key))?.status).toBe("failed");
      });

      it.runIf(engine === "postgres")(
        "runs in the caller's transaction: a rollback there undoes the release (a Prisma transaction as the console's)",
        async () => {
          const key = uniq("capture:rolled-back");
          await stuck(key, -60);
          const prisma = testPrismaClient(db.pool as pg.Pool);
          try {
            await expect(
              prisma.$transaction(async (tx) => {
                expect(await release(tx, { tenant: "acme", key, releasedBy: "ops" })).toEqual({ released: true, attempt: 1 });
                throw new Error("the caller's audit row could not be written");
              }),
            ).rejects.toThrow(/audit row/);
            expect((await statusOf(key))?.status).toBe("in_progress");
            const client = await (db.pool as pg.Pool).connect();
            try {
              await client.query("BEGIN");
              expect(await release(client, { tenant: "acme", key, releasedBy: "ops" })).toEqual({ released: true, attempt: 1 });
              await client.query("COMMIT");
            } finally {
              client.release();
            }
            expect((await statusOf(key))?.status).toBe("failed");
          } finally {
            await prisma.$disconnect();
          }
        },
      );

      it.runIf(engine === "mariadb")(
        "a named release (requestId) runs once: a repeat answers the recorded outcome and releases nothing, even after a takeover",
        async () => {
          const key = uniq("capture:named");
          await stuck(key, -60);
          const requestId = uniq("req");
          expect(await release(db.pool, { tenant: "acme", key, releasedBy: "ops", requestId })).toEqual({
            released: true,
            attempt: 1,
            repeated: false,
          });
          // The next delivery takes it over and dies too: attempt 2 is stuck now.
          const effects = testEffects(db);
          const taken = await effects.claim({ tenant: "acme", key, jobType: "capture" });
          expect(taken).toMatchObject({ kind: "owned" });
          await effects.close();
          await db.expireLease("acme", key);
          expect(await release(db.pool, { tenant: "acme", key, releasedBy: "ops", requestId })).toEqual({
            released: true,
            attempt: 1,
            repeated: true,
          });
          expect((await statusOf(key))?.status).toBe("in_progress");
          // A refusal is recorded as it was too: repeated later it answers the same reason.
          const done = uniq("capture:named-missing");
          const refused = uniq("req");
          expect(await release(db.pool, { tenant: "acme", key: done, releasedBy: "ops", requestId: refused })).toMatchObject({
            released: false,
            reason: "not_found",
            repeated: false,
          });
          await stuck(done, -60);
          expect(await release(db.pool, { tenant: "acme", key: done, releasedBy: "ops", requestId: refused })).toMatchObject({
            released: false,
            reason: "not_found",
            repeated: true,
          });
          expect((await statusOf(done))?.status).toBe("in_progress");
          // One request id names one release.
          await expect(release(db.pool, { tenant: "acme", key: done, releasedBy: "ops", requestId })).rejects.toThrow(
            /another tenant or key/,
          );
          await expect(release(db.pool, { tenant: "acme", key, releasedBy: "ops", requestId: "" })).rejects.toMatchObject({
            field: "requestId",
          });
        },
      );

      it.runIf(engine === "mariadb")(
        "settleRelease answers a committed release, waits for one running, and fences one that has not arrived",
        async () => {
          const key = uniq("capture:settle");
          await stuck(key, -60);
          const committed = uniq("req");
          await release(db.pool, { tenant: "acme", key, releasedBy: "ops", requestId: committed });
          expect(
            await settleRelease(db.pool as never, {
              requestId: committed,
              tenant: "acme",
              key,
              settledBy: "ops",
              schema: db.schema,
            }),
          ).toEqual({ outcome: "released", attempt: 1 });

          const fencedKey = uniq("capture:fenced");
          await stuck(fencedKey, -60);
          const lost = uniq("req");
          expect(
            await settleRelease(db.pool as never, {
              requestId: lost,
              tenant: "acme",
              key: fencedKey,
              settledBy: "ops",
              schema: db.schema,
            }),
          ).toEqual({ outcome: "fenced", attempt: null });
          // The request arriving after its settle releases nothing.
          expect(await release(db.pool, { tenant: "acme", key: fencedKey, releasedBy: "ops", requestId: lost })).toMatchObject({
            released: false,
            reason: "fenced",
            repeated: true,
          });
          expect((await statusOf(fencedKey))?.status).toBe("in_progress");

          // A release held up on the row's lock: the settle waits for it and answers what it did.
          const heldKey = uniq("capture:held");
          await stuck(heldKey, -60);
          const running = uniq("req");
          const holder = await db.begin();
          let released: Promise<unknown>;
          try {
            await appRun(
              holder.tx,
              { pg: "SELECT 1", mysql: "SELECT 1 FROM effects WHERE tenant_id = $1 AND `key` = $2 FOR UPDATE" },
              ["acme", heldKey],
            );
            released = release(db.pool, { tenant: "acme", key: heldKey, releasedBy: "ops", requestId: running });
            // The release has inserted its request's row and waits on the effect's lock.
            while ((await db.lockWaits()) === 0) await sleep(20);
            const settled = settleRelease(db.pool as never, {
              requestId: running,
              tenant: "acme",
              key: heldKey,
              settledBy: "ops",
              schema: db.schema,
            });
            await holder.commit();
            expect(await settled).toEqual({ outcome: "released", attempt: 1 });
            expect(await released).toMatchObject({ released: true, repeated: false });
          } finally {
            holder.release();
          }
        },
      );

      it("refuses a connection outside a transaction (its lock would not hold), and bad input by field", async () => {
        const client =
          engine === "postgres"
            ? await (db.pool as pg.Pool).connect()
            : await (db.pool as unknown as MysqlPoolLike).getConnection();
        try {
          await expect(release(client, { tenant: "acme", key: "capture:x", releasedBy: "ops" })).rejects.toMatchObject({
            code: "NOT_IN_TRANSACTION",
          });
        } finally {
          client.release();
        }
        await expect(release(db.pool, { tenant: "acme", key: "capture:x", releasedBy: "" })).rejects.toMatchObject({
          field: "releasedBy",
        });
      });
    }),
  { poolSize: 6 },
);
