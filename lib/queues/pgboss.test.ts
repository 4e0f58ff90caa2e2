import { randomBytes } from "node:crypto";
import pg from "pg";
import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../test/database";
import { createEffects, type Duration } from "../idempotency";
import { type Decision, type DeliveryInfo, type IdempotentHandler, processBatch } from "./deliveries";
import { consumeIdempotent, deliveryOf, startBoss, workIdempotent } from "./pgboss";
import { sleep, waitFor } from "./testing/wait";

interface Msg {
  tenant: string;
  orderId: string;
  amountCents: number;
}

const SCHEMA = "pgboss";
let db: TestDatabase;
const cleanup: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn().catch(() => {});
  await db.drop();
});

const silent = pino({ level: "silent" });
const unique = (name: string) => `${name}-${randomBytes(4).toString("hex")}`;

/** Counts the library's claim statements through a pool, by prepared-statement name (batched vs single). */
function countClaims(pool: pg.Pool) {
  const counts = { batch: 0, single: 0, completeBatch: 0, complete: 0 };
  const original = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const name = (args[0] as { name?: string } | null)?.name ?? "";
    if (name.startsWith("onceboard_claim_batch")) counts.batch++;
    else if (name.startsWith("onceboard_claim")) counts.single++;
    else if (name.startsWith("onceboard_complete_batch")) counts.completeBatch++;
    else if (name.startsWith("onceboard_complete")) counts.complete++;
    return original(...args);
  };
  return counts;
}

/** A worker "process" of its own: its own pg pool, effects instance, metrics registry and pg-boss. */
async function worker(options: { wait?: Duration; lease?: Duration; rollups?: boolean } = {}) {
  const pool = new pg.Pool({ connectionString: db.url, max: 4 });
  pool.on("error", () => {});
  const claims = countClaims(pool);
  const registry = new Registry();
  const effects = createEffects({
    db: pool,
    lease: options.lease ?? "5s",
    wait: options.wait ?? "200ms",
    registry,
    logger: silent,
    rollups: options.rollups ?? false,
  });
  const boss = await startBoss({ connectionString: db.url, schema: SCHEMA, max: 4, maintenanceIntervalSeconds: 1 });
  cleanup.push(
    () => boss.stop({ graceful: false, wait: true, timeout: 2000 }),
    () => effects.close(),
    () => pool.end(),
  );
  return { pool, registry, effects, boss, claims };
}

async function metric(registry: Registry, name: string, labels: Record<string, string>): Promise<number> {
  const values = (await registry.getSingleMetric(name)?.get())?.values ?? [];
  return values
    .filter((v) => Object.entries(labels).every(([k, val]) => String(v.labels[k]) === val))
    .reduce((sum, v) => sum + v.value, 0);
}

async function jobsOf(queue: string) {
  const { rows } = await db.pool.query<{
    id: string;
    state: string;
    output: Record<string, unknown> | null;
    retry_count: number;
  }>(`SELECT id, state, output, retry_count FROM ${SCHEMA}.job WHERE name = $1 ORDER BY created_on`, [queue]);
  return rows;
}

const settled = async (queue: string, atLeast = 1) => {
  const jobs = await jobsOf(queue);
  return jobs.length >= atLeast && jobs.every((j) => j.state === "completed" || j.state === "failed") ? jobs : null;
};

/**
 * A `once` capture that holds its effect in flight until `release()` (bounded), so another worker
 * sees it in flight; `runs` counts how often it ran.
 */
function heldCapture() {
  let release = () => {};
  const held = new Promise<void>((r) => {
    release = r;
  });
  const capture = {
    runs: 0,
    release: () => release(),
    handler: {
      kind: "once",
      tenant: (m) => m.tenant,
      key: (m) => `capture:${m.orderId}`,
      run: async () => {
        capture.runs++;
        await Promise.race([held, sleep(15_000)]);
        return { chargeId: "ch_only" };
      },
    } as IdempotentHandler<Msg, unknown>,
  };
  return capture;
}

/** A `once` capture handler that counts its runs per order and fails o-bad's first run. */
function capturesFailingOnce(keyPrefix: string) {
  const runs = new Map<string, number>();
  let failOnce = true;
  const handler: IdempotentHandler<Msg, unknown> = {
    kind: "once",
    tenant: (m) => m.tenant,
    key: (m) => `${keyPrefix}:${m.orderId}`,
    run: async (m) => {
      runs.set(m.orderId, (runs.get(m.orderId) ?? 0) + 1);
      if (m.orderId === "o-bad" && failOnce) {
        failOnce = false;
        throw new Error("provider timeout");
      }
      return { chargeId: `ch_${m.orderId}` };
    },
  };
  return { runs, handler };
}

describe("pg-boss adapter (real pg-boss on the test database)", () => {
  it("a message pg-boss redelivers after a failure is suppressed, acked, and returns the stored outcome", async () => {
    const { boss, effects, registry } = await worker();
    const queue = unique("retry");
    await boss.createQueue(queue, { name: queue, retryLimit: 3, retryDelay: 1 });
    let runs = 0;
    const attempts: DeliveryInfo[] = [];
    const handler: IdempotentHandler<Msg, unknown> = {
      kind: "job",
      tenant: (m) => m.tenant,
      run: async (m, job, delivery) => {
        attempts.push(delivery);
        const charge = await job.external(`capture:${m.orderId}`, async () => {
          runs++;
          return { chargeId: `ch_${runs}` };
        });
        // The effect is done, then the delivery fails (a later step, a lost ack): pg-boss retries it.
        if (delivery.attempt === 1) throw new Error("connection reset before the ack");
        return charge;
      },
    };
    await workIdempotent(boss, queue, { effects, handler, pollingIntervalSeconds: 0.5 });
    const id = await boss.send(queue, { tenant: "acme", orderId: "o-1", amountCents: 100 });

    const [job] = await waitFor("the job to complete", () => settled(queue));
    expect(job?.id).toBe(id);
    expect(job?.state).toBe("completed");
    expect(job?.retry_count).toBe(1);
    expect(runs).toBe(1);
    expect(job?.output).toEqual({ outcome: { chargeId: "ch_1" }, duplicate: true });
    expect(attempts.map((a) => [a.attempt, a.redelivered])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(await metric(registry, "idem_duplicate_suppressions_total", { job_type: queue })).toBe(1);
    expect(await metric(registry, "idem_deliveries_total", { job_type: queue, redelivered: "true" })).toBe(1);
  });

  it("a job whose worker died before the ack is expired by pg-boss, redelivered, suppressed with the stored outcome", async () => {
    const live = await worker();
    const crashed = await worker();
    const queue = unique("expired");
    await live.boss.createQueue(queue, { name: queue, retryLimit: 3, retryDelay: 1, expireInSeconds: 1 });
    const message: Msg = { tenant: "globex", orderId: "o-2", amountCents: 250 };
    const id = await live.boss.send(queue, message);

    // The crashing worker (its own connections) takes the job and completes the effect, then
    // never acks: the job stays active until pg-boss's expiry fails it into a retry.
    const [taken] = await crashed.boss.fetch<Msg>(queue, { includeMetadata: true });
    expect(taken?.id).toBe(id);
    let runs = 0;
    await crashed.effects.once(
      { tenant: message.tenant, key: `capture:${message.orderId}`, jobType: queue, messageId: id, attempt: 1, payload: message },
      async () => {
        runs++;
        return { chargeId: "ch_first" };
      },
    );
    await crashed.boss.stop({ graceful: false, wait: true, timeout: 2000 });

    const decisions: Decision<unknown>[] = [];
    await workIdempotent<Msg, unknown>(live.boss, queue, {
      effects: live.effects,
      handler: {
        kind: "once",
        tenant: (m) => m.tenant,
        key: (m) => `capture:${m.orderId}`,
        run: async () => {
          runs++;
          return { chargeId: "ch_second" };
        },
      },
      pollingIntervalSeconds: 0.5,
      onDecision: (d) => decisions.push(d),
    });
    const [job] = await waitFor("the expired job to be redelivered and completed", () => settled(queue));
    expect(job?.state).toBe("completed");
    expect(job?.retry_count).toBeGreaterThanOrEqual(1);
    expect(runs).toBe(1);
    expect(job?.output).toEqual({ outcome: { chargeId: "ch_first" }, duplicate: true });
    expect(decisions).toEqual([{ action: "ack", result: { chargeId: "ch_first" }, duplicate: true }]);
    expect(await metric(live.registry, "idem_deliveries_total", { job_type: queue, redelivered: "true" })).toBe(1);
  });

  it("an in-flight duplicate on another worker is retried later (re-sent with a delay), never dropped, then suppressed", async () => {
    const a = await worker({ wait: "100ms" });
    const b = await worker({ wait: "100ms" });
    const queue = unique("inflight");
    await a.boss.createQueue(queue, { name: queue, retryLimit: 3, retryDelay: 1 });
    const capture = heldCapture();
    const { handler, release } = capture;
    const retriedLater: Decision<unknown>[] = [];
    const onDecision = (d: Decision<unknown>) => {
      if (d.action === "retry-later") {
        retriedLater.push(d);
        release();
      }
    };
    for (const w of [a, b]) {
      await workIdempotent(w.boss, queue, {
        effects: w.effects,
        handler,
        pollingIntervalSeconds: 0.5,
        inFlightDelayMs: 500,
        onDecision,
      });
    }
    const message: Msg = { tenant: "initech", orderId: "o-3", amountCents: 999 };
    // The same message twice in one insert: the two workers fetch one copy each.
    await a.boss.insert([
      { name: queue, data: message },
      { name: queue, data: message },
    ]);

    const jobs = await waitFor("both copies and the re-sent one to complete", () => settled(queue, 3));
    expect(capture.runs).toBe(1);
    expect(retriedLater.length).toBeGreaterThanOrEqual(1);
    const outputs = jobs.map((j) => j.output);
    expect(outputs.filter((o) => o?.inFlight === true).length).toBe(retriedLater.length);
    expect(outputs).toContainEqual({ outcome: { chargeId: "ch_only" }, duplicate: false });
    expect(outputs).toContainEqual({ outcome: { chargeId: "ch_only" }, duplicate: true });
    expect(jobs.every((j) => j.state === "completed")).toBe(true);
  });

  it("a key reused with a different payload is dead-lettered with the reason, and nothing runs", async () => {
    const { boss, effects } = await worker();
    const queue = unique("reuse");
    let runs = 0;
    const deadLetters: string[] = [];
    await workIdempotent<Msg, unknown>(boss, queue, {
      effects,
      handler: {
        kind: "once",
        tenant: (m) => m.tenant,
        key: (m) => `capture:${m.orderId}`,
        run: async (m) => {
          runs++;
          return { charged: m.amountCents };
        },
      },
      pollingIntervalSeconds: 0.5,
      onDeadLetter: ({ reason }) => {
        deadLetters.push(reason);
      },
    });
    await boss.send(queue, { tenant: "acme", orderId: "o-4", amountCents: 100 });
    await waitFor("the first message", () => settled(queue, 1));
    await boss.send(queue, { tenant: "acme", orderId: "o-4", amountCents: 200 });
    const jobs = await waitFor("the reused key", () => settled(queue, 2));

    expect(runs).toBe(1);
    expect(deadLetters).toHaveLength(1);
    expect(deadLetters[0]).toMatch(/different payload/);
    expect(jobs[1]?.output).toMatchObject({ deadLettered: true });
    const parked = await jobsOf(`${queue}.dead-letter`);
    expect(parked).toHaveLength(1);
    const { rows } = await db.pool.query<{ data: { reason: string; data: Msg } }>(
      `SELECT data FROM ${SCHEMA}.job WHERE id = $1`,
      [parked[0]?.id],
    );
    expect(rows[0]?.data.reason).toMatch(/different payload/);
    expect(rows[0]?.data.data.amountCents).toBe(200);
  });
  it("a batch is decided job by job: one job's failure retries that job only, duplicates in the batch run once", async () => {
    const { boss, effects } = await worker();
    const queue = unique("batch");
    await boss.createQueue(queue, { name: queue, retryLimit: 2, retryDelay: 1 });
    const { runs, handler } = capturesFailingOnce("batch-capture");
    // All jobs are queued before the worker starts, so its first fetch takes them as one batch.
    const orders = ["o-1", "o-2", "o-bad", "o-3", "o-1"];
    for (const orderId of orders) await boss.send(queue, { tenant: "acme", orderId, amountCents: 100 });
    await workIdempotent(boss, queue, { effects, handler, batchSize: 10, pollingIntervalSeconds: 0.5 });

    const jobs = await waitFor("every job to settle", () => settled(queue, orders.length));
    expect(jobs.map((j) => j.state)).toEqual(["completed", "completed", "completed", "completed", "completed"]);
    // Only the failing job was retried; the others completed in the first batch.
    expect(jobs.map((j) => j.retry_count)).toEqual([0, 0, 1, 0, 0]);
    expect(runs.get("o-bad")).toBe(2);
    // The duplicate of o-1 in the same batch ran nothing twice (suppressed or retried later, then suppressed).
    expect(runs.get("o-1")).toBe(1);
    expect(runs.get("o-2")).toBe(1);
    expect(runs.get("o-3")).toBe(1);
  });

  it("a batch is claimed in one round trip: new keys run, completed ones answer their stored outcome, a reused key is dead-lettered alone, a failure retries alone", async () => {
    const { boss, effects, claims, registry } = await worker();
    const queue = unique("claim-many");
    await boss.createQueue(queue, { name: queue, retryLimit: 2, retryDelay: 1 });
    const runs = new Map<string, number>();
    let failOnce = true;
    const handler: IdempotentHandler<Msg, unknown> = {
      kind: "once",
      tenant: (m) => m.tenant,
      key: (m) => `capture:${m.orderId}`,
      payload: (m) => ({ amountCents: m.amountCents }),
      run: async (m) => {
        runs.set(m.orderId, (runs.get(m.orderId) ?? 0) + 1);
        if (m.orderId === "o-flaky" && failOnce) {
          failOnce = false;
          throw Object.assign(new Error("duplicate key value violates unique constraint"), {
            code: "23505",
            constraint: "ledger_pkey",
          });
        }
        return { chargeId: `ch_${m.orderId}` };
      },
    };
    // Effects completed before: two duplicates to suppress, and the key the reused message collides with.
    for (const orderId of ["o-done-1", "o-done-2", "o-reused"]) {
      await effects.once({ tenant: "acme", key: `capture:${orderId}`, jobType: queue, payload: { amountCents: 100 } }, () => ({
        chargeId: `ch_${orderId}_before`,
      }));
    }
    const messages: Msg[] = [
      { tenant: "acme", orderId: "o-new-1", amountCents: 100 },
      { tenant: "acme", orderId: "o-done-1", amountCents: 100 },
      { tenant: "acme", orderId: "o-reused", amountCents: 999 },
      { tenant: "acme", orderId: "o-flaky", amountCents: 100 },
      { tenant: "acme", orderId: "o-done-2", amountCents: 100 },
      { tenant: "globex", orderId: "o-new-2", amountCents: 100 },
    ];
    const ids: string[] = [];
    for (const m of messages) ids.push((await boss.send(queue, m)) as string);
    const claimsBefore = { ...claims };
    const decisions = new Map<string, Decision<unknown>>();
    let claimsAtBatchEnd: typeof claimsBefore | null = null;
    const deadLetters: string[] = [];
    // All jobs are queued before the worker starts, so its first fetch takes them as one batch.
    await workIdempotent<Msg, unknown>(boss, queue, {
      effects,
      handler,
      batchSize: 10,
      pollingIntervalSeconds: 0.5,
      onDeadLetter: ({ data }) => {
        deadLetters.push(data.orderId);
      },
      onDecision: (d, delivery) => {
        if (!decisions.has(delivery.messageId)) decisions.set(delivery.messageId, d);
        if (decisions.size === messages.length && claimsAtBatchEnd === null) claimsAtBatchEnd = { ...claims };
      },
    });

    const jobs = await waitFor("every job to settle", async () => {
      const all = await settled(queue, messages.length);
      return all && runs.get("o-flaky") === 2 ? all : null;
    });
    // One claim statement and one completion statement for the whole batch of six, nothing per job.
    expect(claimsAtBatchEnd).toEqual({
      batch: claimsBefore.batch + 1,
      single: claimsBefore.single,
      completeBatch: claimsBefore.completeBatch + 1,
      complete: claimsBefore.complete,
    });
    const byOrder = (orderId: string) => decisions.get(ids[messages.findIndex((m) => m.orderId === orderId)] as string);
    expect(byOrder("o-new-1")).toEqual({ action: "ack", result: { chargeId: "ch_o-new-1" }, duplicate: false });
    expect(byOrder("o-new-2")).toEqual({ action: "ack", result: { chargeId: "ch_o-new-2" }, duplicate: false });
    expect(byOrder("o-done-1")).toEqual({ action: "ack", result: { chargeId: "ch_o-done-1_before" }, duplicate: true });
    expect(byOrder("o-done-2")).toEqual({ action: "ack", result: { chargeId: "ch_o-done-2_before" }, duplicate: true });
    expect(byOrder("o-reused")).toMatchObject({ action: "dead-letter", code: "EFFECT_KEY_REUSE" });
    expect(byOrder("o-flaky")).toMatchObject({ action: "fail", fault: "handler" });
    expect(deadLetters).toEqual(["o-reused"]);
    // Only the failing job was retried (then ran), every job completed; nothing completed before ran again.
    expect(jobs.map((j) => j.state)).toEqual(messages.map(() => "completed"));
    expect(jobs.map((j) => j.retry_count)).toEqual([0, 0, 0, 1, 0, 0]);
    expect(Object.fromEntries(runs)).toEqual({ "o-new-1": 1, "o-new-2": 1, "o-flaky": 2 });
    // The handler's unique violation is counted as uncaught with its constraint, as effects.once counts it.
    expect(await metric(registry, "idem_unique_violations_uncaught_total", { job_type: queue, constraint: "ledger_pkey" })).toBe(
      1,
    );
    expect(await metric(registry, "idem_step_failures_total", { job_type: queue })).toBe(1);
    expect(await metric(registry, "idem_key_reuse_total", { job_type: queue })).toBe(1);
    const { rows } = await db.pool.query<{ key: string; status: string; attempt: number; outcome: unknown }>(
      "SELECT key, status, attempt, outcome FROM effects WHERE job_type = $1 ORDER BY key",
      [queue],
    );
    expect(rows.find((r) => r.key === "capture:o-flaky")).toMatchObject({ status: "completed", attempt: 2 });
    expect(rows.find((r) => r.key === "capture:o-reused")).toMatchObject({ outcome: { chargeId: "ch_o-reused_before" } });
  });

  it("a batch of once deliveries records the rollups effects.once records: failures, uncaught violations per constraint and per tenant", async () => {
    const { boss, effects } = await worker({ rollups: true });
    const queue = unique("batch-rollups");
    const reference = `${queue}-once`;
    await boss.createQueue(queue, { name: queue, retryLimit: 0 });
    const run = async (m: Msg) => {
      if (m.orderId === "o-violates")
        throw Object.assign(new Error("duplicate key value violates unique constraint"), {
          code: "23505",
          constraint: "ledger_pkey",
        });
      if (m.orderId === "o-fails") throw new Error("provider timeout");
      return { chargeId: `ch_${m.orderId}` };
    };
    const handler: IdempotentHandler<Msg, unknown> = {
      kind: "once",
      tenant: (m) => m.tenant,
      key: (m) => `capture:${m.orderId}`,
      run,
    };
    const messages: Msg[] = ["o-ok", "o-violates", "o-fails", "o-ok-2"].map((orderId) => ({
      tenant: "acme",
      orderId,
      amountCents: 100,
    }));
    // The same deliveries through effects.once, under a job type of their own: what the batch must match.
    for (const m of messages) {
      await effects
        .once({ tenant: m.tenant, key: `capture:${m.orderId}`, jobType: reference, payload: m }, () => run(m))
        .catch(() => {});
    }
    // All jobs are queued before the worker starts, so its first fetch takes them as one batch.
    for (const m of messages) await boss.send(queue, m);
    await workIdempotent<Msg, unknown>(boss, queue, { effects, handler, batchSize: 10, pollingIntervalSeconds: 0.5 });
    await waitFor("every job to settle", () => settled(queue, messages.length));
    expect(await effects.flush()).toBe(true);

    const rollupsOf = async (jobType: string) => {
      const stats = await db.pool.query<{ failed: string; uncaught: string; claims: string }>(
        `SELECT sum(failed)::text AS failed, sum(uncaught_violations)::text AS uncaught, sum(claims)::text AS claims
           FROM worker_stats_minute WHERE job_type = $1`,
        [jobType],
      );
      const violations = await db.pool.query(
        "SELECT constraint_name, sum(count)::int AS count FROM uncaught_violations_minute WHERE job_type = $1 GROUP BY constraint_name",
        [jobType],
      );
      // Each violation's own row, written at once with its key.
      const keys = await db.pool.query(
        "SELECT tenant_id, key, constraint_name FROM uncaught_violation_keys WHERE job_type = $1 ORDER BY key",
        [jobType],
      );
      const tenants = await db.pool.query(
        "SELECT tenant_id, constraint_name, sum(count)::int AS count, max(last_key) AS key FROM tenant_violations_hour WHERE job_type = $1 GROUP BY tenant_id, constraint_name",
        [jobType],
      );
      return { stats: stats.rows, violations: violations.rows, keys: keys.rows, tenants: tenants.rows };
    };
    const expected = await rollupsOf(reference);
    expect(expected).toEqual({
      stats: [{ failed: "2", uncaught: "1", claims: "4" }],
      violations: [{ constraint_name: "ledger_pkey", count: 1 }],
      keys: [{ tenant_id: "acme", key: "capture:o-violates", constraint_name: "ledger_pkey" }],
      tenants: [{ tenant_id: "acme", constraint_name: "ledger_pkey", count: 1, key: "capture:o-violates" }],
    });
    expect(await rollupsOf(queue)).toEqual(expected);
  });

  it("a batch redelivered whole after its worker died before the ack runs no effect twice", async () => {
    const live = await worker();
    const crashed = await worker();
    const queue = unique("batch-redelivered");
    await live.boss.createQueue(queue, { name: queue, retryLimit: 3, retryDelay: 1, expireInSeconds: 1 });
    const runs = new Map<string, number>();
    const handler: IdempotentHandler<Msg, unknown> = {
      kind: "once",
      tenant: (m) => m.tenant,
      key: (m) => `capture:${m.orderId}`,
      run: async (m) => {
        runs.set(m.orderId, (runs.get(m.orderId) ?? 0) + 1);
        return { chargeId: `ch_${m.orderId}` };
      },
    };
    const orders = ["o-1", "o-2", "o-3", "o-4"].map((o) => `${queue}:${o}`);
    await live.boss.insert(orders.map((orderId) => ({ name: queue, data: { tenant: "acme", orderId, amountCents: 100 } })));

    // The crashing worker takes the whole batch and runs it through the adapter's batch path, then
    // dies without acking: pg-boss expires every job of the batch and retries them.
    const taken = await crashed.boss.fetch<Msg>(queue, { batchSize: 10, includeMetadata: true });
    expect(taken).toHaveLength(orders.length);
    const first = await processBatch(
      crashed.effects,
      handler,
      taken.map((job) => deliveryOf(queue, job)),
    );
    expect(first.map((d) => d.action)).toEqual(orders.map(() => "ack"));
    await crashed.boss.stop({ graceful: false, wait: true, timeout: 2000 });

    const decisions: { decision: Decision<unknown>; delivery: DeliveryInfo }[] = [];
    await workIdempotent<Msg, unknown>(live.boss, queue, {
      effects: live.effects,
      handler,
      batchSize: 10,
      pollingIntervalSeconds: 0.5,
      onDecision: (decision, delivery) => decisions.push({ decision, delivery }),
    });
    const jobs = await waitFor("the expired batch to be redelivered and completed", async () => {
      const all = await settled(queue, orders.length);
      return all?.every((j) => j.state === "completed") ? all : null;
    });
    expect(jobs.every((j) => j.retry_count >= 1)).toBe(true);
    // The redelivered jobs are fetched together and claimed with the batched claim.
    expect(live.claims.batch).toBeGreaterThanOrEqual(1);
    expect(Object.fromEntries(runs)).toEqual(Object.fromEntries(orders.map((o) => [o, 1])));
    expect(decisions).toHaveLength(orders.length);
    for (const { decision, delivery } of decisions) {
      expect(delivery.redelivered).toBe(true);
      expect(decision).toMatchObject({ action: "ack", duplicate: true });
    }
    expect(decisions.map((d) => d.decision).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))).toEqual(
      orders.map((o) => ({ action: "ack", result: { chargeId: `ch_${o}` }, duplicate: true })),
    );
    expect(await metric(live.registry, "idem_duplicate_suppressions_total", { job_type: queue })).toBe(orders.length);
  });

  describe("consumeIdempotent (deliveries in flight across fetches, batched acks)", () => {
    it("keeps localConcurrency runs in flight across fetches: a slow run holds back no later fetch, and stop() waits for it", async () => {
      const { boss, effects } = await worker();
      const queue = unique("consume-slots");
      await boss.createQueue(queue, { name: queue, retryLimit: 2, retryDelay: 1 });
      let running = 0;
      let mostAtOnce = 0;
      const ran: string[] = [];
      let releaseSlow = () => {};
      const slowHeld = new Promise<void>((r) => {
        releaseSlow = r;
      });
      const handler: IdempotentHandler<Msg, unknown> = {
        kind: "job",
        tenant: (m) => m.tenant,
        run: async (m, job) => {
          running++;
          mostAtOnce = Math.max(mostAtOnce, running);
          try {
            if (m.orderId === "o-slow") await Promise.race([slowHeld, sleep(30_000)]);
            await job.external(`capture:${queue}:${m.orderId}`, async () => ({ chargeId: `ch_${m.orderId}` }));
            ran.push(m.orderId);
          } finally {
            running--;
          }
        },
      };
      // Sent one by one, so pg-boss hands them out in this order: the slow one first.
      const orders = ["o-slow", "o-1", "o-2", "o-3", "o-4", "o-5"];
      const ids: string[] = [];
      for (const orderId of orders) ids.push((await boss.send(queue, { tenant: "acme", orderId, amountCents: 100 })) as string);
      const consumer = await consumeIdempotent<Msg, unknown>(boss, queue, {
        effects,
        handler,
        localConcurrency: 2,
        pollingIntervalMs: 100,
      });

      // Two slots: o-slow holds one the whole time, the other is refilled fetch after fetch.
      const jobs = await waitFor("every job but the slow one to complete", async () => {
        const all = await jobsOf(queue);
        return all.filter((j) => j.state === "completed").length === orders.length - 1 ? all : null;
      });
      expect(jobs.find((j) => j.id === ids[0])?.state).toBe("active");
      expect(ran).toEqual(["o-1", "o-2", "o-3", "o-4", "o-5"]);
      expect(mostAtOnce).toBe(2);
      expect(consumer.inFlight).toBe(1);

      // stop() waits for the run still in flight and acks it, then fetches nothing more.
      const stopped = consumer.stop();
      releaseSlow();
      await stopped;
      expect(consumer.inFlight).toBe(0);
      expect((await jobsOf(queue)).find((j) => j.id === ids[0])?.state).toBe("completed");
      expect(ran).toHaveLength(orders.length);
      const late = (await boss.send(queue, { tenant: "acme", orderId: "o-late", amountCents: 100 })) as string;
      await sleep(500);
      expect((await jobsOf(queue)).find((j) => j.id === late)?.state).toBe("created");
    });

    it("acks wait to be completed together (stop() flushes them in one statement); a failure is failed by id at once and retried", async () => {
      const { boss, effects, claims } = await worker();
      const queue = unique("consume-acks");
      await boss.createQueue(queue, { name: queue, retryLimit: 2, retryDelay: 1 });
      const { runs, handler } = capturesFailingOnce("consume-capture");
      // All queued before the consumer starts, so its first fetch takes them as one batch.
      const orders = ["o-1", "o-2", "o-bad", "o-3", "o-1"];
      const ids: string[] = [];
      for (const orderId of orders) ids.push((await boss.send(queue, { tenant: "acme", orderId, amountCents: 100 })) as string);
      const claimsBefore = { ...claims };
      const decisions: { decision: Decision<unknown>; delivery: DeliveryInfo }[] = [];
      const consumer = await consumeIdempotent<Msg, unknown>(boss, queue, {
        effects,
        handler,
        localConcurrency: 8,
        pollingIntervalMs: 100,
        // Longer than the test: nothing is completed until stop() flushes.
        ackIntervalMs: 600_000,
        onDecision: (decision, delivery) => decisions.push({ decision, delivery }),
      });

      await waitFor("every job decided, the failed one retried and acked", () =>
        decisions.length === orders.length + 1 && consumer.inFlight === 0 ? true : null,
      );
      const bad = ids[2] as string;
      expect(decisions.filter((d) => d.decision.action === "fail").map((d) => d.delivery.messageId)).toEqual([bad]);
      expect(decisions.filter((d) => d.decision.action === "ack")).toHaveLength(orders.length);
      // The fetched batch was claimed in one statement and stored in one.
      expect(claims.batch).toBeGreaterThan(claimsBefore.batch);
      expect(claims.completeBatch).toBeGreaterThan(claimsBefore.completeBatch);
      // Decided and acked, but the completion has not gone out: pg-boss still sees them active.
      const held = await jobsOf(queue);
      expect(held.map((j) => j.state)).toEqual(orders.map(() => "active"));
      expect(held.find((j) => j.id === bad)?.retry_count).toBe(1);

      await consumer.stop();
      const { rows } = await db.pool.query<{ id: string; state: string; completed_on: Date }>(
        `SELECT id, state, completed_on FROM ${SCHEMA}.job WHERE name = $1`,
        [queue],
      );
      expect(rows.map((r) => r.state)).toEqual(orders.map(() => "completed"));
      // One statement completed them all: one transaction timestamp.
      expect(new Set(rows.map((r) => r.completed_on.toISOString())).size).toBe(1);
      // The duplicate of o-1 in the batch ran nothing twice; only the failing job ran again.
      expect(Object.fromEntries(runs)).toEqual({ "o-1": 1, "o-2": 1, "o-bad": 2, "o-3": 1 });
    });

    it("an in-flight duplicate on another consumer is re-sent as a copy of the same message, then suppressed", async () => {
      const a = await worker({ wait: "100ms" });
      const b = await worker({ wait: "100ms" });
      const queue = unique("consume-inflight");
      await a.boss.createQueue(queue, { name: queue, retryLimit: 3, retryDelay: 1 });
      const capture = heldCapture();
      const { handler, release } = capture;
      const decisions: { decision: Decision<unknown>; delivery: DeliveryInfo }[] = [];
      const consumers = [];
      for (const w of [a, b]) {
        consumers.push(
          await consumeIdempotent<Msg, unknown>(w.boss, queue, {
            effects: w.effects,
            handler,
            localConcurrency: 1,
            pollingIntervalMs: 100,
            inFlightDelayMs: 500,
            onDecision: (decision, delivery) => {
              decisions.push({ decision, delivery });
              if (decision.action === "retry-later") release();
            },
          }),
        );
      }
      // Its own order id: the effects table is shared with the other tests.
      const message: Msg = { tenant: "initech", orderId: queue, amountCents: 999 };
      // The same message twice in one insert: each consumer (one slot each) fetches one copy.
      await a.boss.insert([
        { name: queue, data: message },
        { name: queue, data: message },
      ]);
      const jobs = await waitFor("both copies and the re-sent one to complete", async () => {
        const all = await settled(queue, 3);
        return all?.every((j) => j.state === "completed") ? all : null;
      });
      for (const c of consumers) await c.stop();
      expect(capture.runs).toBe(1);
      const retried = decisions.filter((d) => d.decision.action === "retry-later");
      expect(retried.length).toBeGreaterThanOrEqual(1);
      expect(jobs).toHaveLength(2 + retried.length);
      // The copy is the same message redelivered: its id and a later attempt, not a new message.
      const copies = decisions.filter((d) => d.delivery.attempt > 1);
      expect(copies.length).toBeGreaterThanOrEqual(1);
      for (const c of copies) {
        expect(c.delivery.redelivered).toBe(true);
        expect(jobs.map((j) => j.id)).toContain(c.delivery.messageId);
      }
      expect(decisions.filter((d) => d.decision.action === "ack").map((d) => d.decision)).toEqual(
        expect.arrayContaining([
          { action: "ack", result: { chargeId: "ch_only" }, duplicate: false },
          { action: "ack", result: { chargeId: "ch_only" }, duplicate: true },
        ]),
      );
    });
  });
});
