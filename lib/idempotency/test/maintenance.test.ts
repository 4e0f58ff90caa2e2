import type pg from "pg";
import { Registry } from "prom-client";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { maintain, planMaintenance } from "../admin";
import { registerWorker } from "../worker-registry";
import { metricValue, newPool, silentLogger, sleep, testEffects } from "./helpers";

/**
 * The partition manager against a real PostgreSQL: moved time, concurrent runs, an interrupted
 * DETACH … CONCURRENTLY, each guard, and claims running while it detaches and drops.
 */
const DAY = 86_400_000;
const dayStart = (t: number) => Math.floor(t / DAY) * DAY;
// Read again before each test, not once when the file loads: a run that crosses midnight UTC would
// otherwise name yesterday's partitions "today" while the code under test reads the clock.
let today = dayStart(Date.now());

let db: TestDatabase;
beforeEach(async () => {
  today = dayStart(Date.now());
  db = await createTestDatabase({ poolSize: 20 });
});
afterEach(async () => {
  await db?.drop();
});
afterAll(async () => {
  await db?.drop();
});

async function partitionNames(pool: pg.Pool): Promise<string[]> {
  const { rows } = await pool.query<{ name: string }>(
    "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'effects'::regclass ORDER BY 1",
  );
  return rows.map((r) => r.name);
}

const insertAt = (pool: pg.Pool | pg.PoolClient, at: Date, key: string, status = "completed", leaseUntil: Date | null = null) =>
  pool.query(
    `INSERT INTO effects (tenant_id, key, job_type, status, policy, created_at, lease_until) VALUES ('t1', $1, 'test', $2, 'once', $3, $4)`,
    [key, status, at, leaseUntil],
  );

const setSettings = (pool: pg.Pool, retentionDays: number, premake = 3, window = 0) =>
  pool.query(
    "UPDATE retention_settings SET retention_days = $1, premake_count = $2, max_retry_window_days = $3, partition_interval = 'day' WHERE id = 1",
    [retentionDays, premake, window],
  );

/** The daily partitions from `from` to `to` days from today (as the startup premake makes them). */
const makeDays = (pool: pg.Pool, from: number, to: number) =>
  pool.query("SELECT onceboard_ensure_partitions($1::date, $2::date)", [
    new Date(today + from * DAY).toISOString().slice(0, 10),
    new Date(today + to * DAY).toISOString().slice(0, 10),
  ]);

const dayName = (offset: number) => `effects_p${new Date(today + offset * DAY).toISOString().slice(0, 10).replaceAll("-", "")}`;

/** Each partition's indexes of the Keys index's shape (any name), with their validity. */
async function keysIndexes(pool: pg.Pool): Promise<{ partition: string; index: string; valid: boolean }[]> {
  const { rows } = await pool.query<{ partition: string; index: string; valid: boolean }>(
    `SELECT c.relname AS partition, x.relname AS index, ix.indisvalid AS valid
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       JOIN pg_index ix ON ix.indrelid = c.oid JOIN pg_class x ON x.oid = ix.indexrelid
      WHERE i.inhparent = 'effects'::regclass
        AND pg_get_indexdef(ix.indexrelid) LIKE '%USING btree (tenant_id, created_at, key) INCLUDE (first_message_id, status, job_type)'
      ORDER BY 1, 2`,
  );
  return rows;
}

/** `rows` completed effects of tenant t1 spread over one UTC day, keys old:<offset>-<i>. */
const seedDay = (pool: pg.Pool, offset: number, rows: number) =>
  pool.query(
    `INSERT INTO effects (tenant_id, key, job_type, status, policy, created_at, first_message_id)
     SELECT 't1', 'old:' || $1::int || '-' || i, 'test', 'completed', 'once', $2::timestamptz + (i % 86400) * interval '1 second', 'm' || i
       FROM generate_series(1, $3::int) i`,
    [offset, new Date(today + offset * DAY), rows],
  );

type Effects = ReturnType<typeof testEffects>;

/**
 * Six concurrent claimers (`once` on the key `keyOf(worker, i)` gives) that keep claiming while
 * `action` runs, and stop after it: what `action` returned, the claimers' errors, how many claims
 * finished while it ran, and how often each key's effect ran.
 */
async function claimWhile<T>(effects: Effects, keyOf: (worker: number, i: number) => string, action: () => Promise<T>) {
  const runs = new Map<string, number>();
  const errors: unknown[] = [];
  let stop = false;
  let during = false;
  let claimsDuring = 0;
  const worker = async (w: number) => {
    for (let i = 0; !stop; i++) {
      const key = keyOf(w, i);
      try {
        await effects.once({ tenant: "t1", key, jobType: "test", policy: "external" }, async () => {
          runs.set(key, (runs.get(key) ?? 0) + 1);
        });
        if (during) claimsDuring++;
      } catch (error) {
        errors.push(error);
        if (errors.length > 20) stop = true;
      }
    }
  };
  const workers = Array.from({ length: 6 }, (_, w) => worker(w));
  try {
    await sleep(50);
    during = true;
    const run = await action();
    during = false;
    await sleep(50);
    return { run, errors, claimsDuring, runs };
  } finally {
    stop = true;
    await Promise.all(workers);
  }
}

/** Keys with more than one effect row: always 0, or an effect ran twice. */
async function doubledEffects(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM (SELECT tenant_id, key FROM effects GROUP BY 1, 2 HAVING count(*) > 1) d",
  );
  return rows[0]?.n ?? 0;
}

describe("partition maintenance", () => {
  it("keeps premaking and dropping as time moves forward 30 days; an insert at the moved now never misses", async () => {
    await setSettings(db.pool, 3, 3);
    const registry = new Registry();
    for (let hours = 0; hours <= 30 * 24; hours += 12) {
      const now = new Date(Date.now() + hours * 3_600_000);
      const run = await maintain(db.pool, { now, registry, logger: silentLogger(), trigger: "test" });
      expect(run.result, run.error).toBe("success");
      // The INSERT a claim makes at that moment (created_at = now) finds its partition.
      await insertAt(db.pool, now, `k-${hours}`);
      const plan = await planMaintenance(db.pool, { now });
      expect(plan.runwayHours).toBeGreaterThanOrEqual(3 * 24);
      // Bounded: retention + guard slack + premake, never an ever-growing table.
      expect((await partitionNames(db.pool)).length).toBeLessThanOrEqual(3 + 2 + 1 + 3 + 1);
      expect(plan.partitions.filter((p) => p.action === "drop")).toEqual([]);
    }
    const names = await partitionNames(db.pool);
    expect(names).not.toContain(`effects_p${new Date(today).toISOString().slice(0, 10).replaceAll("-", "")}`);
    expect(await metricValue(registry, "idem_maintenance_operations_total", { kind: "drop", result: "ok" })).toBeGreaterThan(20);
    expect(await metricValue(registry, "idem_partition_runway_hours")).toBeGreaterThanOrEqual(72);
    const { rows } = await db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM maintenance_runs WHERE result = 'success'",
    );
    expect(rows[0]?.n).toBe(61);
  });

  it("a claim with no partition for now() fails with PartitionMissingError, counted; the next run recreates it", async () => {
    const registry = new Registry();
    const effects = testEffects(db.pool, { registry });
    const current = `effects_p${new Date(Date.now()).toISOString().slice(0, 10).replaceAll("-", "")}`;
    await db.pool.query(`DROP TABLE ${current}`);
    const claim = () => effects.once({ tenant: "t1", key: "capture:o-1", jobType: "order.capture" }, async () => "done");
    await expect(claim()).rejects.toMatchObject({ code: "PARTITION_MISSING" });
    expect(await metricValue(registry, "idem_partition_missing_errors_total", { job_type: "order.capture" })).toBe(1);
    const run = await maintain(db.pool, { logger: silentLogger() });
    expect(run.operations).toContainEqual(expect.objectContaining({ kind: "create", partition: current, result: "ok" }));
    await expect(claim()).resolves.toMatchObject({ result: "ran", outcome: "done" });
    await effects.close();
  });

  it("two runs started together: one acts, the other skips", async () => {
    await setSettings(db.pool, 3, 20);
    const other = newPool(db.url, 2);
    try {
      let releaseFirst = () => {};
      const held = new Promise<void>((resolve) => {
        releaseFirst = resolve;
      });
      let lockedBy = 0;
      const run = (pool: pg.Pool, n: number) =>
        maintain(pool, {
          logger: silentLogger(),
          afterLock: async () => {
            lockedBy = n;
            await held; // hold the lock until the other run has returned
          },
        });
      const first = run(db.pool, 1);
      while (lockedBy === 0) await sleep(5);
      const second = await run(other, 2);
      releaseFirst();
      const winner = await first;
      expect(second.result).toBe("skipped");
      expect(winner.result).toBe("success");
      expect(winner.operations.filter((o) => o.kind === "create" && o.result === "ok").length).toBeGreaterThan(5);
      // And once free, the next run acts (nothing left to create).
      const third = await maintain(other, { logger: silentLogger() });
      expect(third.result).toBe("success");
      expect(third.operations).toEqual([]);
    } finally {
      await other.end();
    }
  });

  it("finishes an interrupted DETACH … CONCURRENTLY with FINALIZE, then drops the partition", async () => {
    await setSettings(db.pool, 3, 3);
    await makeDays(db.pool, -20, -20);
    const name = `effects_p${new Date(today - 20 * DAY).toISOString().slice(0, 10).replaceAll("-", "")}`;
    const holder = await db.pool.connect();
    const detacher = await db.pool.connect();
    try {
      // An open transaction with a snapshot that can see the partition makes DETACH CONCURRENTLY
      // wait in its second phase; cancelling it there leaves the partition detach-pending.
      await holder.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
      await holder.query("SELECT count(*) FROM effects");
      const pid = (await detacher.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
      // What a run does first (marks the partition ours), then its detach, interrupted below.
      await detacher.query(`COMMENT ON TABLE ${name} IS 'onceboard:retention detach run 0'`);
      const detaching = detacher.query(`ALTER TABLE effects DETACH PARTITION ${name} CONCURRENTLY`).catch((e: Error) => e);
      let pending = false;
      for (let i = 0; i < 400 && !pending; i++) {
        const { rows } = await db.pool.query<{ p: boolean }>(
          "SELECT i.inhdetachpending AS p FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE c.relname = $1",
          [name],
        );
        pending = rows[0]?.p === true;
        if (!pending) await sleep(25);
      }
      expect(pending).toBe(true);
      await db.pool.query("SELECT pg_cancel_backend($1)", [pid]);
      expect(String(await detaching)).toMatch(/cancel/i);
      await holder.query("COMMIT");

      const plan = await planMaintenance(db.pool);
      expect(plan.partitions.find((p) => p.name === name)).toMatchObject({ action: "finalize", detachPending: true });
      const run = await maintain(db.pool, { logger: silentLogger() });
      expect(run.result, run.error).toBe("success");
      expect(run.operations).toContainEqual(expect.objectContaining({ kind: "finalize", partition: name, result: "ok" }));
      expect(await partitionNames(db.pool)).not.toContain(name);
      const { rows } = await db.pool.query("SELECT to_regclass($1) AS t", [name]);
      expect(rows[0]?.t).toBeNull();
    } finally {
      await holder.query("ROLLBACK").catch(() => {});
      holder.release();
      detacher.release();
    }
  });

  it("guards: retention limit, live lease, newest, a missing partition in the middle is recreated", async () => {
    await setSettings(db.pool, 5, 3);
    await makeDays(db.pool, -12, -3);
    const name = (offset: number) => `effects_p${new Date(today + offset * DAY).toISOString().slice(0, 10).replaceAll("-", "")}`;
    // A live lease in an expired partition; a dead one in another.
    // The plan and the run are pinned to noon of `today`, so the day they judge is the one named here.
    const now = new Date(today + DAY / 2);
    await insertAt(db.pool, new Date(today - 10 * DAY + 1000), "live", "in_progress", new Date(now.getTime() + 3_600_000));
    await insertAt(db.pool, new Date(today - 9 * DAY + 1000), "dead", "in_progress", new Date(now.getTime() - 3_600_000));
    // Tomorrow + 1 goes missing (someone dropped it).
    await db.pool.query(`DROP TABLE ${name(2)}`);

    const plan = await planMaintenance(db.pool, { now });
    const byName = new Map(plan.partitions.map((p) => [p.name, p]));
    expect(byName.get(name(-10))).toMatchObject({ action: "keep", guard: "in-flight", liveClaims: 1 });
    expect(byName.get(name(-9))).toMatchObject({ action: "drop" });
    expect(byName.get(name(-12))).toMatchObject({ action: "drop" });
    // The limit is now − 5 days: a partition ending after it is kept by the retention guard.
    expect(byName.get(name(-5))).toMatchObject({ action: "keep", guard: "retention" });
    expect(byName.get(name(-6))).toMatchObject({ action: "drop" });
    expect(byName.get(name(0))).toMatchObject({ action: "keep", guard: "current" });
    expect(plan.create).toContainEqual(expect.objectContaining({ name: name(2), reason: "missing" }));

    const run = await maintain(db.pool, { now, logger: silentLogger() });
    expect(run.result, run.error).toBe("success");
    const names = await partitionNames(db.pool);
    expect(names).toContain(name(-10));
    expect(names).toContain(name(2));
    expect(names).not.toContain(name(-9));
    expect(names).not.toContain(name(-12));
    await insertAt(db.pool, new Date(today + 2 * DAY + 5000), "in-the-gap");

    // Far in the future every partition is expired; the newest two still stay (plan only). They are
    // read from the catalog: the database was premade from the clock when it was created.
    const newestTwo = (await partitionNames(db.pool)).filter((n) => /^effects_p\d{8}$/.test(n)).slice(-2);
    expect(newestTwo).toHaveLength(2);
    const far = await planMaintenance(db.pool, { now: new Date(today + 400 * DAY) });
    const kept = far.partitions.filter((p) => p.guard === "newest").map((p) => p.name);
    expect(kept).toEqual(newestTwo);
  });

  it("a live worker declaring a longer retry window holds partitions the retention alone would drop", async () => {
    await setSettings(db.pool, 10, 3);
    await makeDays(db.pool, -8, -3);
    const worker = registerWorker(db.pool, { workerId: "w-long", maxRetryWindowMs: 10 * DAY, logger: silentLogger() });
    await worker.ready;
    // The retention is lowered afterwards (forced by an admin): the worker is still live.
    await setSettings(db.pool, 2, 3);
    const plan = await planMaintenance(db.pool);
    const old = plan.partitions.find((p) =>
      p.name.endsWith(new Date(today - 8 * DAY).toISOString().slice(0, 10).replaceAll("-", "")),
    );
    expect(old).toMatchObject({ action: "keep", guard: "retry-window" });
    expect(plan.keepSeconds).toBe(10 * 86_400);
    const run = await maintain(db.pool, { logger: silentLogger() });
    expect(run.operations.filter((o) => o.kind === "drop")).toEqual([]);
    // Once the worker stops (its row is removed), the same partitions expire.
    await worker.stop();
    const after = await maintain(db.pool, { logger: silentLogger() });
    expect(after.operations.filter((o) => o.kind === "drop").length).toBeGreaterThanOrEqual(5);
  });

  it("a worker whose window exceeds the database retention refuses to start, with one line naming both", async () => {
    await setSettings(db.pool, 7, 3);
    const effects = testEffects(db.pool, { retention: "30d", maxRetryWindow: "14d", register: true });
    await expect(effects.ready()).rejects.toThrow(
      /^refusing to start: this worker's maxRetryWindow \(14d\) exceeds the database retention \(7d\)[^\n]*$/,
    );
    await effects.close();
    const ok = testEffects(db.pool, { retention: "30d", maxRetryWindow: "3d", register: true });
    await ok.ready();
    // The database's retention replaced the local option.
    expect(ok.options.retentionMs).toBe(7 * DAY);
    const { rows } = await db.pool.query("SELECT max_retry_window_seconds FROM worker_registrations");
    expect(rows).toEqual([{ max_retry_window_seconds: 3 * 86_400 }]);
    await ok.close();
  });

  it("claims running in parallel with apply: no errors, no duplicate effects", async () => {
    await setSettings(db.pool, 3, 10);
    await makeDays(db.pool, -40, -10);
    for (let d = -40; d <= -10; d++) await insertAt(db.pool, new Date(today + d * DAY + 1000), `old-${d}`);
    const claimPool = newPool(db.url, 12);
    const effects = testEffects(claimPool, { wait: "5s" });
    try {
      const { run, errors, claimsDuring, runs } = await claimWhile(
        effects,
        (w, i) => `capture:o-${i % 40}-${Math.floor(i / 40)}-${w % 2}`, // two workers share each key
        () => maintain(db.pool, { logger: silentLogger(), lockTimeoutMs: 500, attempts: 20 }),
      );
      expect(run.result, run.error).toBe("success");
      const drops = run.operations.filter((o) => o.kind === "drop" && o.result === "ok");
      expect(drops.filter((o) => o.partition.startsWith("effects_")).length).toBe(31);
      // Each with its delivery timeline partition of the same range.
      expect(drops.filter((o) => o.partition.startsWith("delivery_timeline_")).length).toBe(31);
      expect(errors.map(String)).toEqual([]);
      expect(claimsDuring).toBeGreaterThan(0);
      expect([...runs.values()].every((n) => n === 1)).toBe(true);
      expect(await doubledEffects(db.pool)).toBe(0);
    } finally {
      await effects.close();
      await claimPool.end();
    }
  });
  it("builds the Keys index on closed partitions only, never on the current or premade ones; the plan says why", async () => {
    await setSettings(db.pool, 7, 3);
    await makeDays(db.pool, -3, -1);
    for (const d of [-3, -2, -1, 0]) await seedDay(db.pool, d, 50);
    const registry = new Registry();

    const plan = await planMaintenance(db.pool);
    expect(plan.index.map((i) => i.partition)).toEqual([dayName(-3), dayName(-2), dayName(-1)]);
    for (const planned of plan.index) {
      expect(planned).toMatchObject({ index: `${planned.partition}_tenant_created_at_idx`, invalid: [] });
      expect(planned.reason).toMatch(/^closed since .*no claim inserts there/);
    }

    const run = await maintain(db.pool, { registry, logger: silentLogger() });
    expect(run.result, run.error).toBe("success");
    const built = run.operations.filter((o) => o.kind === "index");
    expect(built.map((o) => [o.partition, o.result])).toEqual([
      [dayName(-3), "ok"],
      [dayName(-2), "ok"],
      [dayName(-1), "ok"],
    ]);
    // Built after every premake of the run.
    const lastCreate = run.operations.map((o) => o.kind).lastIndexOf("create");
    expect(run.operations.findIndex((o) => o.kind === "index")).toBeGreaterThan(lastCreate);
    expect(await keysIndexes(db.pool)).toEqual(
      [-3, -2, -1].map((d) => ({ partition: dayName(d), index: `${dayName(d)}_tenant_created_at_idx`, valid: true })),
    );
    expect(await metricValue(registry, "idem_maintenance_operations_total", { kind: "index", result: "ok" })).toBe(3);
    const { rows } = await db.pool.query<{ kinds: string[] }>(
      "SELECT array(SELECT o->>'kind' FROM jsonb_array_elements(operations) o) AS kinds FROM maintenance_runs WHERE id = $1",
      [run.runId],
    );
    expect(rows[0]?.kinds.filter((k) => k === "index")).toHaveLength(3);
    expect((await planMaintenance(db.pool)).index).toEqual([]);

    // Tomorrow, today's partition has closed: the next run indexes it, and still not the new current one.
    const tomorrow = new Date(today + DAY + 3_600_000);
    expect((await planMaintenance(db.pool, { now: tomorrow })).index.map((i) => i.partition)).toEqual([dayName(0)]);
    const next = await maintain(db.pool, { now: tomorrow, logger: silentLogger() });
    expect(next.result, next.error).toBe("success");
    expect(next.operations.filter((o) => o.kind === "index").map((o) => o.partition)).toEqual([dayName(0)]);
    expect((await keysIndexes(db.pool)).map((i) => i.partition)).toEqual([-3, -2, -1, 0].map(dayName));

    // A partition about to be dropped is not indexed: far ahead, every old one expires.
    const far = await planMaintenance(db.pool, { now: new Date(today + 30 * DAY) });
    const dropped = new Set(far.partitions.filter((p) => p.action !== "keep").map((p) => p.name));
    expect(dropped.size).toBeGreaterThan(0);
    expect(far.index.filter((i) => dropped.has(i.partition))).toEqual([]);
  });

  it("drops and rebuilds a Keys index an interrupted CREATE INDEX CONCURRENTLY left INVALID", async () => {
    await setSettings(db.pool, 7, 3);
    await makeDays(db.pool, -2, -2);
    await seedDay(db.pool, -2, 200);
    const name = dayName(-2);
    const index = `${name}_tenant_created_at_idx`;
    const holder = await db.pool.connect();
    const builder = await db.pool.connect();
    try {
      // An open snapshot makes the build wait before it can mark the index valid; cancelling it
      // there leaves the index in the catalog, INVALID, as a killed maintenance run would.
      await holder.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
      await holder.query("SELECT count(*) FROM effects");
      const pid = (await builder.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid;
      const building = builder
        .query(
          `CREATE INDEX CONCURRENTLY ${index} ON ${name} (tenant_id, created_at, key) INCLUDE (first_message_id, status, job_type)`,
        )
        .catch((e: Error) => e);
      let waiting = false;
      for (let i = 0; i < 400 && !waiting; i++) {
        const { rows } = await db.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'",
          [pid],
        );
        waiting = rows[0]?.n === 1 && (await keysIndexes(db.pool)).length === 1;
        if (!waiting) await sleep(25);
      }
      expect(waiting).toBe(true);
      await db.pool.query("SELECT pg_cancel_backend($1)", [pid]);
      expect(String(await building)).toMatch(/cancel/i);
      await holder.query("COMMIT");
      expect(await keysIndexes(db.pool)).toEqual([{ partition: name, index, valid: false }]);

      const plan = await planMaintenance(db.pool);
      const planned = plan.index.find((i) => i.partition === name);
      expect(planned).toMatchObject({ index, invalid: [index] });
      expect(planned?.reason).toMatch(/INVALID/);
      const run = await maintain(db.pool, { logger: silentLogger() });
      expect(run.result, run.error).toBe("success");
      const op = run.operations.find((o) => o.kind === "index" && o.partition === name);
      expect(op).toMatchObject({ result: "ok" });
      expect(op?.detail).toMatch(/rebuilt: dropped the INVALID/);
      expect((await keysIndexes(db.pool)).filter((i) => i.partition === name)).toEqual([{ partition: name, index, valid: true }]);
    } finally {
      await holder.query("ROLLBACK").catch(() => {});
      holder.release();
      builder.release();
    }
  });

  it("a build that times out behind a long transaction fails the run; the next run drops the INVALID index and builds it", async () => {
    await setSettings(db.pool, 7, 3);
    await makeDays(db.pool, -2, -2);
    await seedDay(db.pool, -2, 200);
    const name = dayName(-2);
    const holder = await db.pool.connect();
    try {
      await holder.query("BEGIN ISOLATION LEVEL REPEATABLE READ");
      await holder.query("SELECT count(*) FROM effects");
      const run = await maintain(db.pool, { logger: silentLogger(), indexLockTimeoutMs: 200, attempts: 2 });
      expect(run.result).toBe("failed");
      expect(run.operations.filter((o) => o.kind === "index" && o.partition === name)).toEqual([
        expect.objectContaining({ result: "failed", detail: expect.stringMatching(/^55P03 .*lock timeout/) }),
      ]);
      expect((await keysIndexes(db.pool)).filter((i) => i.partition === name)).toEqual([
        { partition: name, index: `${name}_tenant_created_at_idx`, valid: false },
      ]);
    } finally {
      await holder.query("ROLLBACK").catch(() => {});
      holder.release();
    }
    const next = await maintain(db.pool, { logger: silentLogger() });
    expect(next.result, next.error).toBe("success");
    expect(next.operations.find((o) => o.kind === "index" && o.partition === name)?.detail).toMatch(/rebuilt/);
    expect((await keysIndexes(db.pool)).filter((i) => i.partition === name)).toEqual([
      { partition: name, index: `${name}_tenant_created_at_idx`, valid: true },
    ]);
  });

  it("claims, and duplicates of effects in the partitions being indexed, run while the index builds: no errors", async () => {
    await setSettings(db.pool, 7, 3);
    await makeDays(db.pool, -3, -1);
    for (const d of [-3, -2, -1]) await seedDay(db.pool, d, 20_000);
    const claimPool = newPool(db.url, 12);
    const effects = testEffects(claimPool, { wait: "5s" });
    try {
      const { run, errors, claimsDuring, runs } = await claimWhile(
        effects,
        // Odd workers send duplicates of yesterday's effects: each updates its row in a partition being indexed.
        (w, i) => (w % 2 === 1 ? `old:-1-${1 + ((i * 7 + w) % 20_000)}` : `capture:o-${i % 40}-${Math.floor(i / 40)}-${w % 4}`),
        () => maintain(db.pool, { logger: silentLogger(), lockTimeoutMs: 500, attempts: 20 }),
      );
      expect(run.result, run.error).toBe("success");
      expect(run.operations.filter((o) => o.kind === "index" && o.result === "ok").map((o) => o.partition)).toEqual(
        [-3, -2, -1].map(dayName),
      );
      expect(errors.map(String)).toEqual([]);
      expect(claimsDuring).toBeGreaterThan(0);
      // Yesterday's effects were never run again: a duplicate, not a new claim.
      expect([...runs.keys()].filter((k) => k.startsWith("old:"))).toEqual([]);
      expect([...runs.values()].every((n) => n === 1)).toBe(true);
      expect((await keysIndexes(db.pool)).map((i) => [i.partition, i.valid])).toEqual(
        [-3, -2, -1].map((d) => [dayName(d), true]),
      );
      expect(await doubledEffects(db.pool)).toBe(0);
    } finally {
      await effects.close();
      await claimPool.end();
    }
  });
});
