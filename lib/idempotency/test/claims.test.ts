import pg from "pg";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import {
  ClaimSettledError,
  EffectInFlightError,
  EffectKeyReuseError,
  InvalidEffectKeyError,
  IsolationLevelError,
  LeaseLostError,
  OutcomeTooLargeError,
  RetentionConfigError,
  RetentionWindowError,
} from "../errors";
import { createEffects, EffectNotAppliedError, providerKeyFor } from "../index";
import type { MysqlPoolLike } from "../mysql";
import { withEachEngine } from "./engine-suite";
import { ENGINES_AND_DRIVERS, type EngineDatabase } from "./engines";
import { captureLogger, countingPool, metricValue, sleep, testEffects } from "./helpers";

let db: EngineDatabase;
let n = 0;
const uniq = (prefix: string) => `${prefix}-${++n}-${Math.random().toString(36).slice(2, 7)}`;

/** Ends a claim's lease now, as if its owner died long ago: no sleeping until it runs out. */
const expireLease = (tenant: string, key: string) => db.expireLease(tenant, key);

async function until(condition: () => boolean | Promise<boolean>) {
  for (let i = 0; i < 2000 && !(await condition()); i++) await sleep(5);
}

const effectRows = (tenant: string, key: string) => db.effects(tenant, key);

withEachEngine(
  (made) => {
    if (made) db = made;
  },
  (engine) => {
    describe("claims", () => {
      it("runs the first delivery, suppresses the second with the stored outcome, counts it and records the gap", async () => {
        const effects = testEffects(db);
        const key = uniq("capture:order");
        let runs = 0;
        const input = { tenant: "acme", key, jobType: "order.capture", messageId: "m1" };
        const first = await effects.once(input, () => ({ chargeId: `ch_${++runs}`, at: new Date(0) }));
        expect(first).toMatchObject({ result: "ran", duplicate: false, attempt: 1, outcome: { chargeId: "ch_1" } });
        // The live outcome has the same JSON shape a duplicate gets (Date -> ISO string).
        expect(first.outcome?.at).toBe("1970-01-01T00:00:00.000Z");
        const second = await effects.once({ ...input, messageId: "m2", attempt: 2 }, () => ({ chargeId: `ch_${++runs}` }));
        expect(second).toMatchObject({ result: "duplicate", duplicate: true, outcome: first.outcome });
        expect(second.gapSeconds).toBeGreaterThanOrEqual(0);
        expect(runs).toBe(1);
        // The duplicate's claim was read-only; its bookkeeping lands with the next flush.
        expect((await effectRows("acme", key))[0]?.duplicate_count).toBe(0);
        expect(await effects.flush()).toBe(true);
        const [row] = await effectRows("acme", key);
        expect(row).toMatchObject({ status: "completed", duplicate_count: 1 });
        expect(row?.last_duplicate_at).toBeInstanceOf(Date);
        expect(row?.max_gap_seconds).toBeGreaterThanOrEqual(0);
        expect(await metricValue(effects.registry, "idem_duplicate_suppressions_total", { job_type: "order.capture" })).toBe(1);
        expect(await metricValue(effects.registry, "idem_redelivery_gap_seconds", { job_type: "order.capture" })).toBe(1);
        expect(await metricValue(effects.registry, "idem_claims_total", { result: "claimed" })).toBe(1);
        expect(await metricValue(effects.registry, "idem_deliveries_total", { redelivered: "true" })).toBe(1);
      });

      it("claims in one round trip and suppresses a duplicate in one round trip", async () => {
        const counted = countingPool(db.newPool(2));
        const effects = testEffects(counted.pool, { schema: db.schema });
        const key = uniq("capture:order");
        counted.reset();
        const outcome = await effects.claim({ tenant: "acme", key, jobType: "j" });
        expect(counted.count()).toBe(1);
        if (outcome.kind !== "owned") throw new Error("expected owned");
        await outcome.claim.complete({ ok: true });
        expect(counted.count()).toBe(2);
        counted.reset();
        const dup = await effects.once({ tenant: "acme", key, jobType: "j" }, () => ({ ok: false }));
        expect(dup.outcome).toEqual({ ok: true });
        expect(counted.count()).toBe(1);
        await db.closePool(counted.pool);
      });

      it("refuses an outcome over the size limit, stores the effect as done, and never reruns it", async () => {
        const effects = testEffects(db, { maxOutcomeBytes: 100 });
        const key = uniq("render:doc");
        let runs = 0;
        const big = () => {
          runs++;
          return { blob: "x".repeat(200) };
        };
        await expect(effects.once({ tenant: "acme", key, jobType: "j" }, big)).rejects.toBeInstanceOf(OutcomeTooLargeError);
        await expect(effects.once({ tenant: "acme", key, jobType: "j" }, big)).rejects.toThrow(/over the 100-byte limit/);
        expect(runs).toBe(1);
        expect((await effectRows("acme", key))[0]).toMatchObject({ status: "completed", outcome: null });
      });

      it("rejects the same key with a different payload (key reuse), runs nothing, counts it", async () => {
        const effects = testEffects(db);
        const key = uniq("refund:order");
        let runs = 0;
        await effects.once({ tenant: "acme", key, jobType: "j", payload: { cents: 100 } }, () => ++runs);
        // Same payload, keys in another order: same hash, a plain duplicate.
        const same = await effects.once({ tenant: "acme", key, jobType: "j", payload: { cents: 100 } }, () => ++runs);
        expect(same.duplicate).toBe(true);
        const error = await effects
          .once({ tenant: "acme", key, jobType: "j", payload: { cents: 999 } }, () => ++runs)
          .catch((e) => e);
        expect(error).toBeInstanceOf(EffectKeyReuseError);
        expect(error).toMatchObject({ code: "EFFECT_KEY_REUSE", disposition: "dead-letter", tenant: "acme", key });
        expect(runs).toBe(1);
        expect(await metricValue(effects.registry, "idem_key_reuse_total")).toBe(1);
      });

      it("scopes keys by tenant: the same key in two tenants is two effects with different provider keys", async () => {
        const effects = testEffects(db);
        const key = uniq("capture:order");
        const a = await effects.once({ tenant: "tenant-a", key, jobType: "j" }, () => "a");
        const b = await effects.once({ tenant: "tenant-b", key, jobType: "j" }, () => "b");
        expect([a.result, b.result]).toEqual(["ran", "ran"]);
        expect(b.outcome).toBe("b");
        expect(a.providerKey).not.toBe(b.providerKey);
        expect(a.providerKey).toBe(providerKeyFor("tenant-a", key));
        expect(a.providerKey).toMatch(/^[A-Za-z0-9_-]{1,255}$/);
      });

      it("rejects invalid keys before touching the database", async () => {
        const effects = testEffects(db);
        for (const key of ["", "x".repeat(256), "capture:a\nb", "capture:\u0000", "no-step-name", ":empty-step"]) {
          await expect(effects.once({ tenant: "acme", key, jobType: "j" }, () => 1)).rejects.toBeInstanceOf(
            InvalidEffectKeyError,
          );
        }
        await expect(effects.once({ tenant: "", key: "a:b", jobType: "j" }, () => 1)).rejects.toBeInstanceOf(
          InvalidEffectKeyError,
        );
        await expect(effects.once({ tenant: "t\u0007", key: "a:b", jobType: "j" }, () => 1)).rejects.toBeInstanceOf(
          InvalidEffectKeyError,
        );
      });

      it("warns about and counts a key equal to the broker's message id", async () => {
        const { logger, lines } = captureLogger();
        const effects = testEffects(db, { logger });
        const messageId = uniq("msg");
        await effects.once({ tenant: "acme", key: `send:${messageId}`, jobType: "j", messageId }, () => 1);
        expect(await metricValue(effects.registry, "idem_message_id_keys_total", { job_type: "j" })).toBe(1);
        expect(lines.some((l) => l.level === 40 && String(l.msg).includes("message id"))).toBe(true);
      });

      it("logs tenant, key, job type, message id, attempt and result on every execution", async () => {
        const { logger, lines } = captureLogger();
        const effects = testEffects(db, { logger });
        const key = uniq("capture:order");
        await effects.once({ tenant: "acme", key, jobType: "order.capture", messageId: "m-1", attempt: 1 }, () => 1);
        await effects.once({ tenant: "acme", key, jobType: "order.capture", messageId: "m-2", attempt: 2 }, () => 1);
        const executions = lines.filter((l) => l.key === key);
        expect(executions.map((l) => l.result)).toEqual(["ran", "duplicate"]);
        for (const line of executions) {
          expect(line).toMatchObject({ tenant: "acme", key, jobType: "order.capture" });
          expect(line).toHaveProperty("messageId");
          expect(line).toHaveProperty("attempt");
        }
      });

      it("never runs a duplicate while the first is in flight: waits for its outcome", async () => {
        const effects = testEffects(db, { wait: "10s" });
        const key = uniq("capture:order");
        const held = await effects.claim({ tenant: "acme", key, jobType: "j" });
        if (held.kind !== "owned") throw new Error("expected owned");
        let ran = false;
        const waiter = effects.once({ tenant: "acme", key, jobType: "j" }, () => {
          ran = true;
          return "second";
        });
        await sleep(50);
        await held.claim.complete("first");
        const result = await waiter;
        expect(ran).toBe(false);
        expect(result).toMatchObject({ result: "duplicate", outcome: "first" });
      });

      it("reports in-flight (typed, retryable) when the owner is still working after `wait`", async () => {
        const effects = testEffects(db, { lease: "30s" });
        const key = uniq("capture:order");
        const held = await effects.claim({ tenant: "acme", key, jobType: "j" });
        expect(held.kind).toBe("owned");
        const error = await effects.once({ tenant: "acme", key, jobType: "j", wait: "100ms" }, () => 1).catch((e) => e);
        expect(error).toBeInstanceOf(EffectInFlightError);
        expect(error).toMatchObject({ code: "EFFECT_IN_FLIGHT", disposition: "retry" });
        expect(error.retryAfterMs).toBeGreaterThan(0);
        expect(await metricValue(effects.registry, "idem_claims_total", { result: "in_flight" })).toBe(1);
      });

      it("lets exactly one of many concurrent claimers take over an expired lease, attempt + 1, same provider key", async () => {
        const effects = testEffects(db, { wait: "5s" });
        const key = uniq("capture:order");
        const crashed = await effects.claim({ tenant: "acme", key, jobType: "j" });
        if (crashed.kind !== "owned") throw new Error("expected owned");
        await expireLease("acme", key);
        const runs: { attempt: number; providerKey: string }[] = [];
        const results = await Promise.all(
          Array.from({ length: 10 }, () =>
            effects.once({ tenant: "acme", key, jobType: "j", lease: "10s" }, async (claim) => {
              runs.push({ attempt: claim.attempt, providerKey: claim.providerKey });
              await sleep(20);
              return "redone";
            }),
          ),
        );
        expect(runs).toEqual([{ attempt: 2, providerKey: crashed.claim.providerKey }]);
        expect(results.filter((r) => r.result === "ran")).toHaveLength(1);
        expect(results.filter((r) => r.result === "duplicate" && r.outcome === "redone")).toHaveLength(9);
        expect(results.find((r) => r.result === "ran")?.resumed).toBe(true);
        expect(await metricValue(effects.registry, "idem_takeovers_total")).toBe(1);
        // The crashed owner can no longer complete: it lost the lease.
        await expect(crashed.claim.complete("stale")).rejects.toBeInstanceOf(LeaseLostError);
        expect((await effectRows("acme", key))[0]).toMatchObject({ status: "completed", attempt: 2, outcome: "redone" });
      });

      it("at-most-once: an expired claim is marked abandoned, skipped and counted, never sent again", async () => {
        const { logger, lines } = captureLogger();
        const effects = testEffects(db, { logger });
        const key = uniq("receipt:order");
        const crashed = await effects.claim({ tenant: "acme", key, jobType: "j", policy: "atMostOnce" });
        expect(crashed.kind).toBe("owned");
        await expireLease("acme", key);
        let sent = 0;
        const retry = await effects.once({ tenant: "acme", key, jobType: "j", policy: "atMostOnce" }, () => ++sent);
        expect(retry).toMatchObject({ result: "abandoned", duplicate: true, outcome: undefined, attempt: 2 });
        const again = await effects.once({ tenant: "acme", key, jobType: "j", policy: "atMostOnce" }, () => ++sent);
        expect(again.result).toBe("duplicate");
        expect(sent).toBe(0);
        expect(await metricValue(effects.registry, "idem_abandoned_total")).toBe(1);
        expect((await effectRows("acme", key))[0]).toMatchObject({ status: "abandoned", policy: "at_most_once" });
        expect(lines.some((l) => l.result === "abandoned" && l.key === key)).toBe(true);
      });

      it("at-most-once: a step that throws is abandoned, not retried (its email may have gone out); EffectNotAppliedError retries", async () => {
        const { logger, lines } = captureLogger();
        const effects = testEffects(db, { logger });
        const sends: string[] = [];
        // What a mailer client does when the send reached the provider and the answer did not come back.
        const sendThenLoseReply = (key: string) => {
          sends.push(key);
          throw new Error("socket hang up");
        };
        const input = (key: string) => ({ tenant: "acme", key, jobType: "j", policy: "atMostOnce" as const });

        const viaOnce = uniq("receipt:order");
        await expect(effects.once(input(viaOnce), () => sendThenLoseReply(viaOnce))).rejects.toThrow("socket hang up");
        const redelivered = await effects.once(input(viaOnce), () => sendThenLoseReply(viaOnce));
        expect(redelivered).toMatchObject({ result: "duplicate", outcome: undefined, attempt: 1 });
        const [row] = await effectRows("acme", viaOnce);
        expect(row).toMatchObject({ status: "abandoned", attempt: 1 });
        expect(row?.error).toBe("abandoned: attempt 1 threw (Error: socket hang up); at most once, so not run again");
        expect(lines.some((l) => l.result === "abandoned" && l.key === viaOnce)).toBe(true);

        // The same through a job's step and through onceMany.
        const viaJob = uniq("receipt:order");
        const deliverJob = () =>
          effects.job({ tenant: "acme", jobType: "j" }, (job) => job.atMostOnce(viaJob, () => sendThenLoseReply(viaJob)));
        await expect(deliverJob()).rejects.toThrow("socket hang up");
        expect((await deliverJob()).value).toBeUndefined();
        const viaMany = uniq("receipt:order");
        const [manyFirst] = await effects.onceMany([input(viaMany)], () => sendThenLoseReply(viaMany));
        expect(manyFirst).toMatchObject({ ok: false });
        const [manyAgain] = await effects.onceMany([input(viaMany)], () => sendThenLoseReply(viaMany));
        expect(manyAgain).toMatchObject({ ok: true, result: { result: "duplicate", outcome: undefined } });
        expect(sends).toEqual([viaOnce, viaJob, viaMany]);
        expect(await metricValue(effects.registry, "idem_abandoned_total")).toBe(3);

        // A step that knows nothing went out (the provider refused the request) says so, and is retried.
        const refused = uniq("receipt:order");
        let tries = 0;
        const refuseOnce = () => {
          if (++tries === 1) throw new EffectNotAppliedError("the mailer refused the message (422)");
          return { sent: tries };
        };
        await expect(effects.once(input(refused), refuseOnce)).rejects.toBeInstanceOf(EffectNotAppliedError);
        expect((await effectRows("acme", refused))[0]).toMatchObject({ status: "failed" });
        expect(await effects.once(input(refused), refuseOnce)).toMatchObject({ result: "ran", attempt: 2, outcome: { sent: 2 } });

        // Low level: claim.abandon() settles the claim like complete() and fail() do.
        const low = uniq("receipt:order");
        const owned = await effects.claim(input(low));
        if (owned.kind !== "owned") throw new Error("expected owned");
        await owned.claim.abandon(new Error("unsure"));
        await expect(owned.claim.complete("late")).rejects.toBeInstanceOf(ClaimSettledError);
        expect((await effectRows("acme", low))[0]).toMatchObject({ status: "abandoned" });
        expect(await metricValue(effects.registry, "idem_abandoned_total")).toBe(4);
        await effects.close();
      });

      it("lets a long step extend its lease so nobody takes it over", async () => {
        const effects = testEffects(db, { lease: "100ms" });
        const key = uniq("export:report");
        const owner = await effects.claim({ tenant: "acme", key, jobType: "j" });
        if (owner.kind !== "owned") throw new Error("expected owned");
        const firstLeaseEnd = owner.claim.leaseUntil.getTime();
        const extended = await owner.claim.extendLease("30s");
        expect(extended.getTime()).toBeGreaterThan(Date.now() + 20_000);
        // Past the end of the 100 ms lease it started with (a condition, not a guessed sleep).
        await until(async () => {
          const [row] = await db.rows<{ past: boolean | number }>(
            { pg: "SELECT now() > $1::timestamptz AS past", mysql: "SELECT UTC_TIMESTAMP(3) > $1 AS past" },
            [
              db.engine === "postgres"
                ? new Date(firstLeaseEnd)
                : new Date(firstLeaseEnd).toISOString().slice(0, 23).replace("T", " "),
            ],
          );
          return Boolean(row?.past);
        });
        await expect(effects.once({ tenant: "acme", key, jobType: "j", wait: "50ms" }, () => 1)).rejects.toBeInstanceOf(
          EffectInFlightError,
        );
        await owner.claim.complete("done");
      });

      it("a step that throws releases the claim; the next delivery retries it (attempt + 1)", async () => {
        const effects = testEffects(db);
        const key = uniq("capture:order");
        await expect(
          effects.once({ tenant: "acme", key, jobType: "j" }, () => {
            throw new Error("provider 503");
          }),
        ).rejects.toThrow("provider 503");
        expect((await effectRows("acme", key))[0]).toMatchObject({ status: "failed", error: "Error: provider 503" });
        const retry = await effects.once({ tenant: "acme", key, jobType: "j" }, () => "ok");
        expect(retry).toMatchObject({ result: "ran", attempt: 2, resumed: true, outcome: "ok" });
        expect(await metricValue(effects.registry, "idem_step_failures_total")).toBe(1);
      });

      it("counts a unique violation from the handler's own writes with its constraint name, logs and rethrows it", async () => {
        const { logger, lines } = captureLogger();
        const effects = testEffects(db, { logger });
        await db.run({
          pg: "CREATE TABLE IF NOT EXISTS invoices (number text CONSTRAINT invoices_number_key UNIQUE)",
          mysql: "CREATE TABLE IF NOT EXISTS invoices (number VARCHAR(64), CONSTRAINT invoices_number_key UNIQUE (number))",
        });
        await db.run({
          pg: "INSERT INTO invoices VALUES ('INV-1') ON CONFLICT DO NOTHING",
          mysql: "INSERT INTO invoices VALUES ('INV-1') ON DUPLICATE KEY UPDATE number = number",
        });
        const error = await effects
          .once({ tenant: "acme", key: uniq("invoice:order"), jobType: "invoice.create" }, () =>
            db.run("INSERT INTO invoices VALUES ('INV-1')"),
          )
          .catch((e) => e);
        if (engine === "postgres") {
          expect(error).toBeInstanceOf(pg.DatabaseError);
          expect(error.code).toBe("23505");
        } else {
          // mysql2's error, as the handler's own driver threw it: ER_DUP_ENTRY.
          expect(error).toMatchObject({ errno: 1062, code: "ER_DUP_ENTRY" });
        }
        expect(
          await metricValue(effects.registry, "idem_unique_violations_uncaught_total", {
            job_type: "invoice.create",
            constraint: "invoices_number_key",
          }),
        ).toBe(1);
        expect(lines.some((l) => l.result === "uncaught_unique_violation" && l.constraint === "invoices_number_key")).toBe(true);
      });

      it.runIf(engine === "postgres").each([
        ["REPEATABLE READ", "repeatable read"],
        ["SERIALIZABLE", "serializable"],
      ])("refuses to claim inside a %s transaction, naming the level", async (level, named) => {
        const effects = testEffects(db);
        const client = await (db.pool as pg.Pool).connect();
        try {
          await client.query(`BEGIN ISOLATION LEVEL ${level}`);
          const error = await effects
            .once({ tenant: "acme", key: uniq("mark-paid:order"), jobType: "j", policy: "transactional", tx: client }, () => 1)
            .catch((e) => e);
          expect(error).toBeInstanceOf(IsolationLevelError);
          expect(error.isolationLevel).toBe(named);
          expect(error.message).toContain(level);
        } finally {
          await client.query("ROLLBACK");
          client.release();
        }
      });

      it.runIf(engine === "mariadb")(
        "claims in a caller's transaction at every isolation level: a completion committed after its snapshot is a duplicate, an uncommitted one is in flight",
        async () => {
          const effects = testEffects(db, { wait: "100ms" });
          const pool = db.pool as unknown as MysqlPoolLike;
          const connection = await pool.getConnection();
          const holder = await pool.getConnection();
          try {
            for (const level of ["READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"]) {
              const key = uniq("mark-paid:order");
              await connection.query(`SET TRANSACTION ISOLATION LEVEL ${level}`);
              await connection.beginTransaction();
              // The transaction's snapshot starts here (a read of another table: under SERIALIZABLE a read of
              // effects would lock its gaps, and the other connection's insert would wait for this one).
              await connection.query("SELECT retention_days FROM retention_settings");
              // Another connection runs the effect and commits after that snapshot.
              expect((await effects.once({ tenant: "acme", key, jobType: "j" }, () => "first")).result).toBe("ran");
              let ran = false;
              const again = await effects.once(
                { tenant: "acme", key, jobType: "j", policy: "transactional", tx: connection },
                () => {
                  ran = true;
                },
              );
              expect(again, level).toMatchObject({ result: "duplicate", outcome: "first" });
              expect(ran, level).toBe(false);
              await connection.commit();

              // A transactional step has completed this key in a transaction that is still open: it is in
              // flight (READ UNCOMMITTED must not read the uncommitted outcome), and runs once it rolls back.
              const open = uniq("mark-paid:order");
              await holder.beginTransaction();
              await effects.once(
                { tenant: "acme", key: open, jobType: "j", policy: "transactional", tx: holder },
                () => "rolled back",
              );
              await connection.query(`SET TRANSACTION ISOLATION LEVEL ${level}`);
              await connection.beginTransaction();
              const error = await effects
                .once({ tenant: "acme", key: open, jobType: "j", policy: "transactional", tx: connection }, () => "second")
                .catch((e) => e);
              expect(error, level).toBeInstanceOf(EffectInFlightError);
              await connection.rollback();
              await holder.rollback();
              const retried = await effects.once({ tenant: "acme", key: open, jobType: "j" }, () => "second");
              expect(retried, level).toMatchObject({ result: "ran", outcome: "second" });
            }
          } finally {
            await connection.rollback().catch(() => {});
            await holder.rollback().catch(() => {});
            connection.release();
            holder.release();
          }
        },
      );

      it("refuses a retention shorter than the longest retry window", () => {
        expect(() => createEffects({ db: db.pool, retention: "2d", maxRetryWindow: "3d", registry: new Registry() })).toThrow(
          RetentionConfigError,
        );
        expect(() => createEffects({ db: db.pool, retention: "2d", maxRetryWindow: "3d", registry: new Registry() })).toThrow(
          /shorter than maxRetryWindow/,
        );
      });

      it("refuses a delivery older than the retention whose record is gone (a prune during a retry)", async () => {
        const effects = testEffects(db, { retention: "1d", maxRetryWindow: "1d" });
        const key = uniq("capture:order");
        const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
        const day = twoDaysAgo.toISOString().slice(0, 10).replaceAll("-", "");
        // The first run, two days ago (on PostgreSQL its row lives in that day's partition).
        await db.run(
          {
            pg: `INSERT INTO effects (tenant_id, key, job_type, status, policy, outcome, created_at, completed_at)
       VALUES ('acme', $1, 'j', 'completed', 'once', '"first"', $2, $2)`,
            mysql: `INSERT INTO effects (tenant_id, \`key\`, job_type, status, policy, outcome, created_at, updated_at, completed_at)
       VALUES ('acme', $1, 'j', 'completed', 'once', '"first"', $2, $2, $2)`,
          },
          [key, db.engine === "postgres" ? twoDaysAgo : twoDaysAgo.toISOString().slice(0, 23).replace("T", " ")],
        );
        const late = { tenant: "acme", key, jobType: "j", publishedAt: twoDaysAgo, attempt: 5 };
        // While the record exists, the late retry is a plain duplicate.
        expect(await effects.once(late, () => "again")).toMatchObject({ result: "duplicate", outcome: "first" });
        // The retention manager drops that partition (on MariaDB, deletes the row); the same retry must not run blindly.
        if (engine === "postgres") await db.run(`DROP TABLE effects_p${day}`);
        else await db.run("DELETE FROM effects WHERE `key` = $1", [key]);
        let ran = false;
        const error = await effects
          .once(late, () => {
            ran = true;
          })
          .catch((e) => e);
        expect(error).toBeInstanceOf(RetentionWindowError);
        expect(ran).toBe(false);
        // A fresh message (recent publishedAt) for a new key is unaffected.
        expect(
          (await effects.once({ tenant: "acme", key: uniq("capture:order"), jobType: "j", publishedAt: new Date() }, () => 1))
            .result,
        ).toBe("ran");
      });
    });
  },
  { poolSize: 20, engines: ENGINES_AND_DRIVERS },
);
