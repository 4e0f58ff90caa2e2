import { spawn } from "node:child_process";
import path from "node:path";
import type pg from "pg";
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../../test/database";
import { maintain } from "../admin";
import { EffectKeyReuseError } from "../errors";
import { withEachEngine } from "./engine-suite";
import type { EngineDatabase } from "./engines";
import { countingPool, silentLogger, sleep, testEffects } from "./helpers";

/**
 * The delivery timeline (delivery_timeline) on each engine: every delivery of a key with the
 * claim's answer, from separate connections and a separate, SIGKILLed process; the option off
 * writes nothing. On PostgreSQL also its partitions, made and dropped with effects' (MariaDB's are
 * maintain()'s: mysql-maintenance.test.ts).
 */
let db: EngineDatabase;

interface TimelineRow {
  answer: string;
  message_id: string | null;
  delivery_attempt: number | null;
  effect_attempt: number;
  worker_id: string;
  claim_ms: number;
  delivered_at: Date;
  effect_created_at: Date | null;
}

/** A chunk's element for delivery n: a one-element column is every delivery's (migration 0015). */
const elementOf = (column: string) => `CASE WHEN cardinality(c.${column}) = 1 THEN c.${column}[1] ELSE c.${column}[k.n] END`;

async function timelineOf(key: string, tenant = "t1"): Promise<TimelineRow[]> {
  if (db.engine === "mariadb") {
    // A row per delivery (migrations-mysql/0001_baseline.sql).
    return (
      await db.rows<TimelineRow>(
        `SELECT answer, message_id, delivery_attempt, effect_attempt, worker_id, claim_ms, delivered_at, effect_created_at
           FROM delivery_timeline WHERE tenant_id = $1 AND \`key\` = $2 ORDER BY delivered_at, answer`,
        [tenant, key],
      )
    ).map((r) => ({ ...r, claim_ms: Number(r.claim_ms) }));
  }
  const rows = await db.rows<TimelineRow>(
    `SELECT u.answer, u.message_id, u.delivery_attempt, u.effect_attempt, c.worker_id, u.claim_ms, u.delivered_at,
            CASE cardinality(c.effect_created_at) WHEN 0 THEN u.delivered_at ELSE ${elementOf("effect_created_at")} END
              AS effect_created_at
       FROM delivery_timeline c
      CROSS JOIN LATERAL unnest(c.keys) WITH ORDINALITY AS k(key, n)
      CROSS JOIN LATERAL (
             SELECT ${elementOf("tenants")} AS tenant_id, ${elementOf("answers")} AS answer, ${elementOf("message_ids")} AS message_id,
                    ${elementOf("delivery_attempts")} AS delivery_attempt, ${elementOf("effect_attempts")} AS effect_attempt,
                    ${elementOf("claim_ms")} AS claim_ms, ${elementOf("delivered_at")} AS delivered_at) u
      WHERE u.tenant_id = $1 AND k.key = $2
      ORDER BY u.delivered_at, u.answer`,
    [tenant, key],
  );
  return rows;
}

withEachEngine(
  (made) => {
    if (made) db = made;
  },
  (engine) => {
    describe("delivery timeline", () => {
      it("two concurrent copies on separate connections: one claimed, the other waited for its outcome", async () => {
        const poolA = db.newPool(2);
        const counted = countingPool(db.newPool(2));
        const a = testEffects(poolA, { workerId: "worker-a", schema: db.schema });
        const b = testEffects(counted.pool, { workerId: "worker-b", wait: "20s", schema: db.schema });
        try {
          let release!: () => void;
          const released = new Promise<void>((resolve) => {
            release = resolve;
          });
          let started!: () => void;
          const running = new Promise<void>((resolve) => {
            started = resolve;
          });
          const first = a.once({ tenant: "t1", key: "pay:pair", jobType: "timeline", messageId: "m-1" }, async () => {
            started();
            await released;
            return { ran: "a" };
          });
          await running;
          counted.reset();
          const second = b.once({ tenant: "t1", key: "pay:pair", jobType: "timeline", messageId: "m-1", attempt: 2 }, () => ({
            ran: "b",
          }));
          // Release the owner only once the copy has polled at least twice: it saw the effect in flight.
          while (counted.count() < 2) await sleep(5);
          release();
          const [r1, r2] = await Promise.all([first, second]);
          expect(r1.result).toBe("ran");
          expect(r2.result).toBe("duplicate");
          expect(await a.flush()).toBe(true);
          expect(await b.flush()).toBe(true);
          const rows = await timelineOf("pay:pair");
          expect(rows.map((r) => [r.answer, r.worker_id])).toEqual([
            ["claimed", "worker-a"],
            ["waited", "worker-b"],
          ]);
          expect(rows[1]?.delivery_attempt).toBe(2);
          expect(rows[1]?.message_id).toBe("m-1");
          // The wait is part of the claim's time; both rows name the one effect.
          expect(rows[0]?.effect_created_at?.getTime()).toBe(rows[0]?.delivered_at.getTime());
          expect(rows[1]?.effect_created_at?.getTime()).toBe(rows[0]?.delivered_at.getTime());
        } finally {
          await Promise.all([a.close(), b.close()]);
          await Promise.all([db.closePool(poolA), db.closePool(counted.pool)]);
        }
      });

      it("a late replay after completion is a duplicate; a key reused with another payload is key_reuse", async () => {
        const effects = testEffects(db, { workerId: "worker-late" });
        try {
          await effects.once(
            { tenant: "t1", key: "pay:late", jobType: "timeline", messageId: "m-1", payload: { cents: 100 } },
            () => 1,
          );
          const replay = await effects.once(
            { tenant: "t1", key: "pay:late", jobType: "timeline", messageId: "m-1", attempt: 3, payload: { cents: 100 } },
            () => 2,
          );
          expect(replay.result).toBe("duplicate");
          await expect(
            effects.once(
              { tenant: "t1", key: "pay:late", jobType: "timeline", messageId: "m-2", payload: { cents: 999 } },
              () => 3,
            ),
          ).rejects.toBeInstanceOf(EffectKeyReuseError);
          expect(await effects.flush()).toBe(true);
          const rows = await timelineOf("pay:late");
          expect(rows.map((r) => [r.answer, r.message_id, r.delivery_attempt])).toEqual([
            ["claimed", "m-1", null],
            ["duplicate", "m-1", 3],
            ["key_reuse", "m-2", null],
          ]);
        } finally {
          await effects.close();
        }
      });

      it("a takeover after the owner was SIGKILLed; the killed worker lost only its unflushed rows", async () => {
        const done = testEffects(db, { workerId: "worker-setup" });
        await done.once({ tenant: "t1", key: "pay:crash-done", jobType: "timeline" }, () => "ok");
        await done.close();
        await killedChild({ key: "pay:crash", doneKey: "pay:crash-done", unflushed: 5 });

        const survivor = testEffects(db, { workerId: "worker-survivor" });
        try {
          // The child's lease is 300 ms; claim until it has expired and is taken over.
          let result = await survivor.claim({
            tenant: "t1",
            key: "pay:crash",
            jobType: "timeline",
            messageId: "m-after",
            wait: "5s",
          });
          expect(result.kind).toBe("owned");
          if (result.kind === "owned") await result.claim.complete("recovered");
          result = await survivor.claim({ tenant: "t1", key: "pay:crash", jobType: "timeline", messageId: "m-later" });
          expect(result.kind).toBe("duplicate");
          expect(await survivor.flush()).toBe(true);
        } finally {
          await survivor.close();
        }
        const rows = await timelineOf("pay:crash");
        expect(rows.map((r) => [r.answer, r.worker_id, r.effect_attempt])).toEqual([
          ["claimed", "timeline-child", 1],
          ["takeover", "worker-survivor", 2],
          ["duplicate", "worker-survivor", 2],
        ]);
        // The five duplicates the child took after its last flush died with it.
        expect((await timelineOf("pay:crash-done")).filter((r) => r.worker_id === "timeline-child")).toEqual([]);
      });

      it("onceMany records each key of the batch", async () => {
        const effects = testEffects(db, { workerId: "worker-batch" });
        try {
          await effects.once({ tenant: "t1", key: "pay:batch-2", jobType: "timeline" }, () => "before");
          const answers = await effects.onceMany(
            [
              { tenant: "t1", key: "pay:batch-1", jobType: "timeline", messageId: "b-1" },
              { tenant: "t1", key: "pay:batch-2", jobType: "timeline", messageId: "b-2" },
            ],
            () => "ran",
          );
          expect(answers.every((a) => a.ok)).toBe(true);
          expect(await effects.flush()).toBe(true);
          expect((await timelineOf("pay:batch-1")).map((r) => r.answer)).toEqual(["claimed"]);
          expect((await timelineOf("pay:batch-2")).map((r) => r.answer)).toEqual(["claimed", "duplicate"]);
        } finally {
          await effects.close();
        }
      });

      it("with the timeline option off nothing is written", async () => {
        const effects = testEffects(db, { timeline: false });
        try {
          await effects.once({ tenant: "t1", key: "pay:off", jobType: "timeline" }, () => 1);
          await effects.once({ tenant: "t1", key: "pay:off", jobType: "timeline" }, () => 2);
          expect(await effects.flush()).toBe(true);
          expect(await timelineOf("pay:off")).toEqual([]);
        } finally {
          await effects.close();
        }
      });
    });

    describe.runIf(engine === "postgres")("timeline partitions", () => {
      const DAY = 86_400_000;
      const today = Math.floor(Date.now() / DAY) * DAY;
      const day = (offset: number) => new Date(today + offset * DAY);
      const ymd = (offset: number) => day(offset).toISOString().slice(0, 10).replaceAll("-", "");

      async function partitionsOf(pool: pg.Pool, parent: string): Promise<string[]> {
        const { rows } = await pool.query<{ name: string }>(
          "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY 1",
          [parent],
        );
        return rows.map((r) => r.name);
      }

      it("are premade beside effects' and dropped, rows and all, with the effects partition of their range", async () => {
        const scratch = await createTestDatabase({ poolSize: 4 });
        try {
          const pool = scratch.pool;
          await pool.query(
            "UPDATE retention_settings SET retention_days = 2, premake_count = 3, max_retry_window_days = 0, partition_interval = 'day' WHERE id = 1",
          );
          await pool.query("SELECT onceboard_ensure_partitions($1::date, $2::date)", [
            day(-10).toISOString().slice(0, 10),
            day(-9).toISOString().slice(0, 10),
          ]);
          expect(await partitionsOf(pool, "delivery_timeline")).toContain(`delivery_timeline_p${ymd(-10)}`);
          // One old delivery and one of today.
          // A first delivery as the worker writes it: a chunk of one (timeline.ts).
          const insert = (at: Date, key: string) =>
            pool.query(
              `INSERT INTO delivery_timeline (first_at, last_at, chunk_id, worker_id, tenants, keys, job_types, delivered_at,
                                          answers, message_ids, delivery_attempts, effect_attempts, claim_ms, effect_created_at)
           VALUES ($2, $2, gen_random_uuid(), 'w', ARRAY['t1'], ARRAY[$1], ARRAY['timeline'], ARRAY[$2::timestamptz],
                   ARRAY['claimed'], ARRAY[NULL::text], ARRAY[NULL::int], ARRAY[1], ARRAY[1::real], ARRAY[$2::timestamptz])`,
              [key, at],
            );
          await insert(new Date(day(-10).getTime() + 3_600_000), "old");
          await insert(new Date(), "new");
          // A daily effects partition the premake of another interval would leave without a timeline one.
          await pool.query(`DROP TABLE delivery_timeline_p${ymd(2)}`);

          const run = await maintain(pool, { logger: silentLogger(), trigger: "test" });
          expect(run.result).toBe("success");
          const effects = await partitionsOf(pool, "effects");
          const timeline = await partitionsOf(pool, "delivery_timeline");
          expect(effects).not.toContain(`effects_p${ymd(-10)}`);
          expect(timeline).not.toContain(`delivery_timeline_p${ymd(-10)}`);
          expect(timeline).not.toContain(`delivery_timeline_p${ymd(-9)}`);
          // Every effects partition has its timeline partition, the one dropped above made again.
          expect(timeline).toEqual(effects.map((name) => name.replace(/^effects_/, "delivery_timeline_")));
          expect(run.operations).toContainEqual(
            expect.objectContaining({ kind: "drop", partition: `delivery_timeline_p${ymd(-10)}`, result: "ok" }),
          );
          const { rows } = await pool.query<{ key: string }>("SELECT unnest(keys) AS key FROM delivery_timeline ORDER BY key");
          expect(rows.map((r) => r.key)).toEqual(["new"]);
          // No WAL for the timeline: every partition is UNLOGGED, the premade and the remade ones alike.
          const persistence = await pool.query<{ relpersistence: string }>(
            "SELECT DISTINCT c.relpersistence FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'delivery_timeline'::regclass",
          );
          expect(persistence.rows.map((r) => r.relpersistence)).toEqual(["u"]);
          // No pglz on the arrays (migration 0012): the partitions made after the migration, by the
          // premake and by maintain(), store them uncompressed like the parent.
          const compressible = await pool.query<{ partition: string; column: string }>(
            `SELECT c.relname AS partition, a.attname AS column
           FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_attribute a ON a.attrelid = c.oid
          WHERE i.inhparent = 'delivery_timeline'::regclass AND a.attnum > 0 AND NOT a.attisdropped
            AND a.atttypid IN (SELECT oid FROM pg_type WHERE typcategory = 'A') AND a.attstorage <> 'e'`,
          );
          expect(compressible.rows).toEqual([]);
          expect(timeline.length).toBeGreaterThan(3);
          // Unreachable as a table too: the partition is gone, not detached.
          const left = await pool.query("SELECT to_regclass($1) AS t", [`delivery_timeline_p${ymd(-10)}`]);
          expect(left.rows[0].t).toBeNull();
        } finally {
          await scratch.drop();
        }
      });
    });

    describe.runIf(engine === "postgres")("the chunk's parallel check (migration 0015)", () => {
      const chunk = (tenants: string, createdAt: string) =>
        db.run(
          `INSERT INTO delivery_timeline (first_at, last_at, chunk_id, worker_id, tenants, keys, job_types, delivered_at, answers,
                                      message_ids, delivery_attempts, effect_attempts, claim_ms, effect_created_at)
       VALUES (now(), now(), gen_random_uuid(), 'check', ${tenants}, ARRAY['a', 'b', 'c'], ARRAY['j'], ARRAY[now()],
               ARRAY['claimed'], ARRAY[NULL::text], ARRAY[NULL::int], ARRAY[1], ARRAY[1::real], ${createdAt})`,
        );
      it("takes a column of one element or of every delivery's, and an empty effect_created_at", async () => {
        await chunk("ARRAY['t1']", "'{}'::timestamptz[]");
        await chunk("ARRAY['t1', 't2', 't1']", "ARRAY[now()]");
      });
      it("refuses any other length", async () => {
        await expect(chunk("ARRAY['t1', 't2']", "ARRAY[now()]")).rejects.toMatchObject({
          constraint: "delivery_timeline_parallel_check",
        });
        await expect(chunk("ARRAY['t1']", "ARRAY[now(), now()]")).rejects.toMatchObject({
          constraint: "delivery_timeline_parallel_check",
        });
      });
    });
  },
  { poolSize: 10 },
);

/** Runs timeline-worker.ts and SIGKILLs it once it is READY. Resolves once it is dead. */
function killedChild(opts: { key: string; doneKey: string; unflushed: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "timeline-worker.ts")], {
      cwd: path.resolve(import.meta.dirname, "../../.."),
      env: {
        ...process.env,
        TIMELINE_DATABASE_URL: db.url,
        TIMELINE_KEY: opts.key,
        TIMELINE_DONE_KEY: opts.doneKey,
        TIMELINE_UNFLUSHED: String(opts.unflushed),
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let killed = false;
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (!killed && out.includes("READY")) {
        killed = true;
        child.kill("SIGKILL");
      }
    });
    child.stderr.on("data", (chunk) => {
      err += chunk;
    });
    child.on("error", reject);
    child.on("exit", (_code, signal) => {
      if (killed && signal === "SIGKILL") resolve();
      else reject(new Error(`the timeline worker did not get READY: ${out}\n${err}`));
    });
  });
}
