import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { MailerClient, startMailerServer } from "../demo/mailer-server";
import { PROVIDER_SCHEMA } from "../demo/stripe-storage";
import { createEffects, type Duration, type EffectResult, type Effects, onceboardMetadata } from "../idempotency";
import { isConnectionError } from "../idempotency/pg-errors";
import { metricValue } from "../idempotency/test/helpers";
import { commitPointOf, type FaultProxy, startFaultProxy } from "./fault-proxy";

/**
 * Each fault of the soak's proxy injected once, at the worst moment (armed on the one request
 * where it hurts, not drawn at a rate), against the worker library, and against a naive handler
 * under the same fault: the library passes the assertion, the naive handler fails that very
 * assertion (the negative control: the fault really happened, and the assertion can fail).
 */

let db: TestDatabase;
let proxy: FaultProxy;
let viaProxy: pg.Pool;
let n = 0;
const uniq = (prefix: string) => `${prefix}-${++n}-${Math.random().toString(36).slice(2, 8)}`;
/** An effect key: `<step>:<business fact>`. */
const keyFor = (step: string) => `${step}:${uniq("order")}`;

const DDL = `
CREATE TABLE chaos_writes (key text NOT NULL, what text NOT NULL);
CREATE TABLE chaos_naive_claims (key text PRIMARY KEY, status text NOT NULL, owner text NOT NULL, outcome text);
`;

function poolOn(url: string, max = 2): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max });
  pool.on("error", () => {});
  // A connection the proxy cuts while a client is checked out is an 'error' on that client.
  pool.on("connect", (client) => client.on("error", () => {}));
  return pool;
}

function effectsOn(pool: pg.Pool, lease: Duration = "30s"): Effects<pg.PoolClient> {
  return createEffects({
    db: pool,
    registry: new Registry(),
    logger: pino({ level: "silent" }),
    rollups: false,
    flushInterval: 0,
    register: false,
    lease,
    wait: "0ms",
  });
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };
const settle = <T>(p: Promise<T>): Promise<Settled<T>> =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
const reported = (s: Settled<{ result: string }>) => (s.ok ? s.value.result : "failed");
const codeOf = (s: Settled<unknown>) => (s.ok ? "completed" : ((s.error as { code?: string }).code ?? String(s.error)));

const writes = async (key: string, what?: string) =>
  (
    await db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM chaos_writes WHERE key = $1 AND ($2::text IS NULL OR what = $2)",
      [key, what ?? null],
    )
  ).rows[0]!.n;

/** What a hand-rolled retry wrapper does: the same statement again after a connection error. */
async function retryOnConnectionError<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (attempt >= 4 || !isConnectionError(error)) throw error;
      await sleep(20);
    }
  }
}

/** The naive idempotent handler: INSERT a claim, run, mark it completed; statements retried on connection errors. */
async function naiveOnce(pool: pg.Pool, key: string, owner: string, fn: () => Promise<string>): Promise<{ result: string }> {
  const claimed = await retryOnConnectionError(() =>
    pool.query("INSERT INTO chaos_naive_claims (key, status, owner) VALUES ($1, 'in_progress', $2) ON CONFLICT DO NOTHING", [
      key,
      owner,
    ]),
  );
  if (claimed.rowCount === 0) throw new Error(`${key} is claimed by another delivery`);
  const outcome = await fn();
  const completed = await retryOnConnectionError(() =>
    pool.query("UPDATE chaos_naive_claims SET status = 'completed', outcome = $2 WHERE key = $1 AND status = 'in_progress'", [
      key,
      outcome,
    ]),
  );
  if (completed.rowCount === 0) throw new Error(`lost the claim on ${key}`);
  return { result: "ran" };
}

beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 4 });
  await db.pool.query(DDL);
  const target = new URL(db.sqlUrl);
  proxy = await startFaultProxy({ target: { host: target.hostname, port: Number(target.port || 5432) } });
  viaProxy = poolOn(proxy.urlFor(db.sqlUrl));
});
afterAll(async () => {
  await viaProxy?.end().catch(() => {});
  await proxy?.close();
  await db?.drop();
});

describe("the proxy reads the wire protocol", () => {
  it("names the commit points: COMMIT in a block, the library's claim and completion in autocommit", () => {
    expect(commitPointOf("COMMIT", "T")).toBe("commit");
    expect(commitPointOf("commit", "I")).toBeNull(); // nothing to commit: a warning, not a commit point
    expect(commitPointOf("SELECT result FROM onceboard.onceboard_claim($1::text)", "I")).toBe("claim");
    // Inside a block the claim commits with the transaction, at its COMMIT.
    expect(commitPointOf("SELECT result FROM onceboard.onceboard_claim($1::text)", "T")).toBeNull();
    expect(commitPointOf("UPDATE onceboard.effects\n   SET outcome = CASE WHEN status = 'completed' THEN outcome END", "I")).toBe(
      "complete",
    );
    expect(commitPointOf("UPDATE onceboard.effects SET status = 'failed'", "I")).toBeNull();
    expect(commitPointOf("SELECT 1", "I")).toBeNull();
  });

  it("delays every packet without reordering replies, and the library's answers stay right", async () => {
    const latent = await startFaultProxy({
      target: { host: proxy.host, port: proxy.port },
      rates: { latencyMaxMs: 15 },
    });
    const pool = poolOn(latent.urlFor(db.sqlUrl), 4);
    const effects = effectsOn(pool);
    try {
      const keys = Array.from({ length: 20 }, () => keyFor("latent"));
      let runs = 0;
      const deliver = (key: string) =>
        effects.once({ tenant: "acme", key, jobType: "chaos", messageId: uniq("m") }, async () => {
          runs++;
          return { key };
        });
      const first = await Promise.all(keys.map(deliver));
      const again = await Promise.all(keys.map(deliver));
      expect(first.map((r) => [r.result, r.outcome])).toEqual(keys.map((key) => ["ran", { key }]));
      expect(again.map((r) => [r.result, r.outcome])).toEqual(keys.map((key) => ["duplicate", { key }]));
      expect(runs).toBe(keys.length);
      expect(latent.counts.delayedPacket).toBeGreaterThan(0);
    } finally {
      await effects.close();
      await pool.end();
      await latent.close();
    }
  });
});

describe("each fault once, at the worst moment: the library against a naive handler", () => {
  it("claim reply lost: the retried claim is recognised as this delivery's own; the step runs once and reports ran", async () => {
    const effects = effectsOn(viaProxy);
    const key = keyFor("capture");
    let runs = 0;
    const fault = proxy.arm("reply_lost", (r) => r.commitPoint === "claim");
    const outcome = await settle(
      effects.once({ tenant: "acme", key, jobType: "chaos", messageId: uniq("m") }, async () => {
        runs++;
        return { charged: true };
      }),
    );
    expect((await fault).commitPoint).toBe("claim");
    const assertRight = (o: { runs: number; reported: string }) => expect(o).toEqual({ runs: 1, reported: "ran" });
    assertRight({ runs, reported: reported(outcome) });

    // The control: the same fault on its claim; its retry finds the row it committed and calls it another's.
    const naiveKey = keyFor("naive-capture");
    let naiveRuns = 0;
    const naiveFault = proxy.arm("reply_lost", (r) => r.text?.startsWith("INSERT INTO chaos_naive_claims") === true);
    const naive = await settle(
      naiveOnce(viaProxy, naiveKey, "naive", async () => {
        naiveRuns++;
        return "charged";
      }),
    );
    await naiveFault;
    expect(() => assertRight({ runs: naiveRuns, reported: reported(naive) })).toThrow();
    await effects.close();
  });

  it("a takeover's claim reply lost: the retried claim is this delivery's own, and it still reports resumed, attempt 2", async () => {
    const direct = poolOn(db.sqlUrl);
    const crashedWorker = effectsOn(direct, "200ms");
    const successor = effectsOn(viaProxy);
    const key = keyFor("capture-takeover");
    const input = () => ({ tenant: "acme", key, jobType: "chaos", messageId: uniq("m") });
    const crashed = await crashedWorker.claim(input());
    expect(crashed.kind).toBe("owned");
    await sleep(400); // its lease has expired: the next claim is a takeover
    let runs = 0;
    const fault = proxy.arm("reply_lost", (r) => r.commitPoint === "claim");
    const outcome = await successor.once(input(), async (claim) => {
      runs++;
      return { attempt: claim.attempt };
    });
    expect((await fault).commitPoint).toBe("claim");
    // The retry finds the row its lost reply committed and answers "claimed"; an earlier attempt
    // existed all the same, so a handler that checks `resumed` (a partial run to reconcile) is told.
    expect({ runs, result: outcome.result, attempt: outcome.attempt, resumed: outcome.resumed }).toEqual({
      runs: 1,
      result: "ran",
      attempt: 2,
      resumed: true,
    });
    await crashedWorker.close();
    await successor.close();
    await direct.end();
  });

  it("completion reply lost: the step is not run again and the delivery is not reported failed", async () => {
    const effects = effectsOn(viaProxy);
    const key = keyFor("receipt");
    let runs = 0;
    const deliver = () =>
      settle(
        effects.once({ tenant: "acme", key, jobType: "chaos", messageId: uniq("m"), policy: "atMostOnce" }, async () => {
          runs++;
          return { sent: 1 };
        }),
      );
    const fault = proxy.arm("reply_lost", (r) => r.commitPoint === "complete");
    const outcome = await deliver();
    expect((await fault).commitPoint).toBe("complete");
    const redelivered = await deliver();
    const assertRight = (o: { runs: number; reported: string; redelivered: string }) =>
      expect(o).toEqual({ runs: 1, reported: "ran", redelivered: "duplicate" });
    assertRight({ runs, reported: reported(outcome), redelivered: reported(redelivered) });

    const naiveKey = keyFor("naive-receipt");
    let naiveRuns = 0;
    const naiveDeliver = () =>
      settle(
        naiveOnce(viaProxy, naiveKey, "naive", async () => {
          naiveRuns++;
          return "sent";
        }),
      );
    const naiveFault = proxy.arm("reply_lost", (r) => r.text?.startsWith("UPDATE chaos_naive_claims") === true);
    const naive = await naiveDeliver();
    await naiveFault;
    // The naive handler reports the completion it committed as a lost claim (the broker retries it).
    expect(() => assertRight({ runs: naiveRuns, reported: reported(naive), redelivered: "duplicate" })).toThrow();
    expect(reported(naive)).toBe("failed");
    await effects.close();
  });

  it("the provider's own commit reply lost inside an at-most-once step (the mailer stored the email, then answered 500): abandoned, never sent twice", async () => {
    // The mailer's database connection goes through the proxy; the library's does not.
    const mailer = await startMailerServer({ databaseUrl: proxy.urlFor(db.sqlUrl) });
    const client = new MailerClient(mailer.url);
    const effects = effectsOn(db.pool);
    const emails = async (key: string) =>
      (
        await db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ${PROVIDER_SCHEMA}.messages WHERE onceboard_key = $1`,
          [key],
        )
      ).rows[0]!.n;
    const storedEmail = (r: { text: string | null }) => r.text?.startsWith(`INSERT INTO ${PROVIDER_SCHEMA}.messages`) === true;
    try {
      const key = keyFor("receipt");
      const deliver = () =>
        settle(
          effects.once({ tenant: "acme", key, jobType: "chaos", messageId: uniq("m"), policy: "atMostOnce" }, (claim) =>
            client.send({ to: "billing@acme.example", subject: "Receipt", ...onceboardMetadata(claim) }),
          ),
        );
      const fault = proxy.arm("reply_lost", storedEmail);
      const first = await deliver();
      await fault;
      const redelivered = await deliver();
      const assertRight = (o: { emails: number; first: string; redelivered: string }) =>
        expect(o).toEqual({ emails: 1, first: "failed", redelivered: "duplicate" });
      assertRight({ emails: await emails(key), first: reported(first), redelivered: reported(redelivered) });
      const { rows } = await db.pool.query<{ status: string; error: string }>(
        "SELECT status, error FROM onceboard.effects WHERE tenant_id = 'acme' AND key = $1",
        [key],
      );
      expect(rows[0]).toMatchObject({ status: "abandoned" });
      expect(rows[0]!.error).toMatch(/attempt 1 threw \(Error: the mailer failed \(500\)/);

      // The control: what the library did before, a send that threw released as failed and retried.
      const naiveKey = keyFor("naive-receipt");
      const naiveSend = () =>
        client.send({ to: "billing@acme.example", subject: "Receipt", onceboard_key: naiveKey, onceboard_tenant: "acme" });
      const naiveFault = proxy.arm("reply_lost", storedEmail);
      const naiveFirst = await settle(naiveSend());
      await naiveFault;
      const naiveRetry = await settle(naiveSend());
      const naiveEmails = await emails(naiveKey);
      expect(() =>
        assertRight({
          emails: naiveEmails,
          first: naiveFirst.ok ? "ran" : "failed",
          redelivered: naiveRetry.ok ? "ran" : "failed",
        }),
      ).toThrow();
      expect(naiveEmails).toBe(2);
    } finally {
      await effects.close();
      await mailer.close();
    }
  });

  it("transactional step whose COMMIT reply was lost: resolved by reading the claim, never by running the step again", async () => {
    const effects = effectsOn(viaProxy);
    const key = keyFor("mark-paid");
    let runs = 0;
    const fault = proxy.arm("reply_lost", (r) => r.commitPoint === "commit");
    const outcome = await settle(
      effects.once(
        { tenant: "acme", key, jobType: "chaos", messageId: uniq("m"), policy: "transactional" },
        async (_claim, tx) => {
          runs++;
          await tx!.query("INSERT INTO chaos_writes (key, what) VALUES ($1, 'entry')", [key]);
          return { paid: true };
        },
      ),
    );
    expect((await fault).commitPoint).toBe("commit");
    const assertRight = async (o: { runs: number; writes: number; ok: boolean; outcome: unknown }) =>
      expect(o).toEqual({ runs: 1, writes: 1, ok: true, outcome: { paid: true } });
    // Read back: the rerun's claim found the committed effect (a duplicate of itself) with its outcome.
    await assertRight({
      runs,
      writes: await writes(key),
      ok: outcome.ok,
      outcome: outcome.ok ? (outcome.value as EffectResult<unknown>).outcome : null,
    });

    // The control: a transaction retried whole on a connection error, with nothing to read back.
    const naiveKey = keyFor("naive-mark-paid");
    let naiveRuns = 0;
    const naiveFault = proxy.arm("reply_lost", (r) => r.commitPoint === "commit");
    await retryOnConnectionError(async () => {
      const client = await viaProxy.connect();
      try {
        await client.query("BEGIN");
        naiveRuns++;
        await client.query("INSERT INTO chaos_writes (key, what) VALUES ($1, 'entry')", [naiveKey]);
        await client.query("COMMIT");
        client.release();
      } catch (error) {
        client.release(true);
        throw error;
      }
    });
    await naiveFault;
    await expect(
      assertRight({ runs: naiveRuns, writes: await writes(naiveKey), ok: true, outcome: { paid: true } }),
    ).rejects.toThrow();
    expect(await writes(naiveKey)).toBe(2);
    await effects.close();
  });

  it("a rerun transaction counts its delivery once: a lost COMMIT's delivery is a run, a duplicate reset at its COMMIT one suppression", async () => {
    const effects = effectsOn(viaProxy);
    const jobType = uniq("chaos-books");
    const spec = (key: string) => ({ tenant: "acme", key, jobType, messageId: uniq("m"), policy: "transactional" as const });
    const counted = async () => ({
      claimed: await metricValue(effects.registry, "idem_claims_total", { job_type: jobType, result: "claimed" }),
      duplicate: await metricValue(effects.registry, "idem_claims_total", { job_type: jobType, result: "duplicate" }),
      suppressed: await metricValue(effects.registry, "idem_duplicate_suppressions_total", { job_type: jobType }),
    });
    const key = keyFor("mark-paid");

    // The first delivery's COMMIT reaches the server and its reply is lost: rerun, it finds its own
    // committed effect. One delivery, one run, no suppression.
    const lost = proxy.arm("reply_lost", (r) => r.commitPoint === "commit");
    const first = await effects.once(spec(key), async (_claim, tx) => {
      await tx!.query("INSERT INTO chaos_writes (key, what) VALUES ($1, 'entry')", [key]);
      return { paid: true };
    });
    expect((await lost).commitPoint).toBe("commit");
    expect(first).toMatchObject({ result: "ran", duplicate: false, outcome: { paid: true } });
    expect(await counted()).toEqual({ claimed: 1, duplicate: 0, suppressed: 0 });

    // A redelivery, suppressed, whose COMMIT is cut: its transaction is rerun, and counted once.
    const reset = proxy.arm("reset_in_transaction", (r) => r.text !== null && /^\s*COMMIT\b/i.test(r.text));
    const second = await effects.once(spec(key), async () => {
      throw new Error("a duplicate must not run");
    });
    expect((await reset).transaction).toBe("T");
    expect(second).toMatchObject({ result: "duplicate", outcome: { paid: true } });
    expect(await counted()).toEqual({ claimed: 1, duplicate: 1, suppressed: 1 });
    expect(await writes(key)).toBe(1);
    await effects.close();
  });

  it("connection reset between two statements of a transaction: all of it is rerun, each write lands exactly once", async () => {
    const effects = effectsOn(viaProxy);
    const key = keyFor("book");
    const fault = proxy.arm("reset_in_transaction", (r) => r.text?.includes("'second'") === true);
    const outcome = await settle(
      effects.once(
        { tenant: "acme", key, jobType: "chaos", messageId: uniq("m"), policy: "transactional" },
        async (_claim, tx) => {
          await tx!.query("INSERT INTO chaos_writes (key, what) VALUES ($1, 'first')", [key]);
          await tx!.query("INSERT INTO chaos_writes (key, what) VALUES ($1, 'second')", [key]);
          return { booked: true };
        },
      ),
    );
    expect((await fault).transaction).toBe("T");
    const assertRight = async (k: string, ok: boolean) =>
      expect({ first: await writes(k, "first"), second: await writes(k, "second"), ok }).toEqual({
        first: 1,
        second: 1,
        ok: true,
      });
    await assertRight(key, outcome.ok);

    // The control: each statement retried on its own after the reset, on a new connection, as if
    // the transaction were still open: the first write was rolled back with it, the second lands alone.
    const naiveKey = keyFor("naive-book");
    const naiveFault = proxy.arm("reset_in_transaction", (r) => r.text?.includes("'second'") === true);
    let client = await viaProxy.connect();
    const statement = async (text: string, values: unknown[] = []) =>
      retryOnConnectionError(async () => {
        try {
          return await client.query(text, values);
        } catch (error) {
          client.release(true);
          client = await viaProxy.connect();
          throw error;
        }
      });
    await statement("BEGIN");
    await statement("INSERT INTO chaos_writes (key, what) VALUES ($1, 'first')", [naiveKey]);
    await statement("INSERT INTO chaos_writes (key, what) VALUES ($1, 'second')", [naiveKey]);
    await statement("COMMIT");
    client.release();
    await naiveFault;
    await expect(assertRight(naiveKey, true)).rejects.toThrow();
    await effects.close();
  });

  it("claim reply stalled past the lease: the stalled worker does not complete over its successor", async () => {
    const stalled = effectsOn(viaProxy, "300ms");
    const direct = poolOn(db.sqlUrl);
    const successor = effectsOn(direct, "30s");
    proxy.setRates({ stallMs: 1200 });
    try {
      const key = keyFor("capture-stall");
      const input = () => ({ tenant: "acme", key, jobType: "chaos", messageId: uniq("m") });
      const fault = proxy.arm("stalled_reply", (r) => r.commitPoint === "claim");
      const first = settle(stalled.once(input(), async () => ({ by: "stalled" })));
      await sleep(600); // the claim committed with a 300 ms lease; its reply is still held
      const second = await successor.once(input(), async () => ({ by: "successor" }));
      expect(second).toMatchObject({ result: "ran", resumed: true });
      const late = await first;
      await fault;
      const stored = async () =>
        (await db.pool.query<{ outcome: unknown }>("SELECT outcome FROM effects WHERE key = $1", [key])).rows[0]?.outcome;
      const assertRight = (o: { stored: unknown; stalledWorker: string }) =>
        expect(o).toEqual({ stored: { by: "successor" }, stalledWorker: "LEASE_LOST" });
      assertRight({ stored: await stored(), stalledWorker: codeOf(late) });

      // The control: a completion that names the row by key only, so the stalled worker's lands last.
      const naiveKey = keyFor("naive-capture-stall");
      const naiveFault = proxy.arm("stalled_reply", (r) => r.text?.startsWith("INSERT INTO chaos_naive_claims") === true);
      const naiveFirst = settle(
        (async () => {
          await viaProxy.query("INSERT INTO chaos_naive_claims (key, status, owner) VALUES ($1, 'in_progress', 'stalled')", [
            naiveKey,
          ]);
          await viaProxy.query("UPDATE chaos_naive_claims SET status = 'completed', outcome = 'stalled' WHERE key = $1", [
            naiveKey,
          ]);
        })(),
      );
      await sleep(600);
      await direct.query("UPDATE chaos_naive_claims SET owner = 'successor' WHERE key = $1", [naiveKey]); // its takeover
      await direct.query("UPDATE chaos_naive_claims SET status = 'completed', outcome = 'successor' WHERE key = $1", [naiveKey]);
      const naiveLate = await naiveFirst;
      await naiveFault;
      const naiveStored = (
        await db.pool.query<{ outcome: string }>("SELECT outcome FROM chaos_naive_claims WHERE key = $1", [naiveKey])
      ).rows[0]?.outcome;
      expect(() =>
        assertRight({
          stored: naiveStored === "successor" ? { by: "successor" } : { by: naiveStored },
          stalledWorker: codeOf(naiveLate),
        }),
      ).toThrow();
    } finally {
      proxy.setRates({ stallMs: 0 });
      await stalled.close();
      await successor.close();
      await direct.end();
    }
  });
});
