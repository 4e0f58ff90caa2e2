import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { maintain, planMaintenance } from "../admin";
import { migrate } from "../index";
import { ensureTimelinePartitions } from "../maintenance-mysql";
import { type MysqlPoolLike, toMysqlTime } from "../mysql";
import { eachEngine } from "./engine-suite";
import { createEngineDatabase, type EngineDatabase } from "./engines";
import { silentLogger, testEffects } from "./helpers";

/**
 * maintain() on MariaDB (maintenance-mysql.ts): the timeline's day partitions premade ahead and
 * dropped whole once expired, each ALTER bounded by a short metadata-lock wait; effects' expired rows
 * deleted in batches, a claim whose lease is alive kept whatever its age; violations pruned; one run
 * at a time (a lease, not GET_LOCK); every run recorded.
 */
const DAY = 86_400_000;
const today = Math.floor(Date.now() / DAY) * DAY;
const day = (offset: number) => new Date(today + offset * DAY);
const ymd = (offset: number) => day(offset).toISOString().slice(0, 10).replaceAll("-", "");

async function timelinePartitions(db: EngineDatabase): Promise<string[]> {
  const rows = await db.rows<{ name: string }>(
    "SELECT PARTITION_NAME AS name FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'delivery_timeline' ORDER BY PARTITION_ORDINAL_POSITION",
  );
  return rows.map((r) => r.name);
}

/** A database whose timeline has partitions for ten and nine days ago only, and old and new rows. */
async function oldDatabase(): Promise<EngineDatabase> {
  const db = await createEngineDatabase("mariadb", { poolSize: 6 });
  await db.run("UPDATE retention_settings SET retention_days = 2, max_retry_window_days = 0, premake_count = 3 WHERE id = 1");
  return db;
}

eachEngine(() => {
  describe("maintain() on MariaDB", () => {
    it("premakes the timeline's partitions, drops expired ones whole, deletes expired effects but a live claim, prunes violations, records the run", async () => {
      const db = await oldDatabase();
      try {
        // A fresh schema has the timeline's partitions from yesterday on (migrate): remake them so
        // that the oldest hold ten and nine days ago, as an older installation's would.
        await db.run("ALTER TABLE delivery_timeline REMOVE PARTITIONING");
        await db.run(
          "ALTER TABLE delivery_timeline PARTITION BY RANGE COLUMNS (delivered_at) (PARTITION p_start VALUES LESS THAN ('2000-01-01 00:00:00'))",
        );
        await ensureTimelinePartitions(db.pool as unknown as MysqlPoolLike, db.schema, {
          from: day(-10),
          to: day(-8),
          interval: "day",
          lockTimeoutSeconds: 2,
          attempts: 3,
        });
        expect(await timelinePartitions(db)).toEqual(["p_start", `p${ymd(-10)}`, `p${ymd(-9)}`]);
        await ensureTimelinePartitions(db.pool as unknown as MysqlPoolLike, db.schema, {
          from: day(-1),
          to: day(4),
          interval: "day",
          lockTimeoutSeconds: 2,
          attempts: 3,
        });
        const timelineRow = (at: Date, key: string) =>
          db.run(
            `INSERT INTO delivery_timeline (delivered_at, chunk_id, seq, tenant_id, \`key\`, job_type, answer, effect_attempt, claim_ms, worker_id)
               VALUES ($1, $2, 0, 't', $3, 'j', 'claimed', 1, 1, 'w')`,
            [toMysqlTime(at), randomUUID(), key],
          );
        await timelineRow(new Date(day(-10).getTime() + 3_600_000), "capture:old");
        await timelineRow(new Date(day(-1).getTime() + 3_600_000), "capture:yesterday");
        const effectRow = (key: string, createdAt: Date, status: string, leaseUntil: Date | null) =>
          db.run(
            `INSERT INTO effects (tenant_id, \`key\`, job_type, status, policy, owner, lease_until, created_at, updated_at)
               VALUES ('t', $1, 'j', $2, 'external', 'w', $3, $4, $4)`,
            [key, status, leaseUntil && toMysqlTime(leaseUntil), toMysqlTime(createdAt)],
          );
        await effectRow("capture:expired", day(-10), "completed", null);
        await effectRow("capture:old-but-running", day(-10), "in_progress", new Date(Date.now() + 3_600_000));
        await effectRow("capture:recent", day(0), "completed", null);
        await db.run(
          `INSERT INTO uncaught_violation_keys (id, occurred_at, tenant_id, job_type, constraint_name, \`key\`)
             VALUES (UUID(), $1, 't', 'j', 'c', 'insert:old'), (UUID(), UTC_TIMESTAMP(3), 't', 'j', 'c', 'insert:new')`,
          [toMysqlTime(day(-10))],
        );

        const plan = await planMaintenance(db.pool as unknown as MysqlPoolLike, { schema: db.schema });
        expect(plan.partitions.find((p) => p.name === `p${ymd(-10)}`)).toMatchObject({ action: "drop" });
        // The catch-all first partition is kept, and the one after it starts at its own day, not at p_start's bound.
        expect(plan.partitions[0]).toMatchObject({ name: "p_start", action: "keep", guard: "catch-all", from: null });
        expect(plan.partitions[1]).toMatchObject({ name: `p${ymd(-10)}`, from: day(-10), to: day(-9) });
        const run = await maintain(db.pool as unknown as MysqlPoolLike, {
          schema: db.schema,
          logger: silentLogger(),
          trigger: "test",
        });
        expect(run.result).toBe("success");
        const partitions = await timelinePartitions(db);
        expect(partitions).not.toContain(`p${ymd(-10)}`);
        expect(partitions).not.toContain(`p${ymd(-9)}`);
        expect(partitions[0]).toBe("p_start");
        expect(run.operations).not.toContainEqual(expect.objectContaining({ partition: "p_start" }));
        expect(await db.rows("SELECT 1 FROM delivery_timeline WHERE `key` = 'capture:yesterday'")).toHaveLength(1);
        for (const k of [0, 1, 2, 3]) expect(partitions).toContain(`p${ymd(k)}`);
        expect(run.operations).toContainEqual(expect.objectContaining({ kind: "drop", partition: `p${ymd(-10)}`, result: "ok" }));
        expect(run.operations).toContainEqual(
          expect.objectContaining({ kind: "prune", partition: "effects", result: "ok", detail: "1 row(s) in 1 batch(es)" }),
        );
        expect(await db.rows("SELECT 1 FROM delivery_timeline WHERE `key` = 'capture:old'")).toEqual([]);
        const left = await db.rows<{ key: string }>("SELECT `key` FROM effects ORDER BY `key`");
        expect(left.map((r) => r.key)).toEqual(["capture:old-but-running", "capture:recent"]);
        expect((await db.rows<{ key: string }>("SELECT `key` FROM uncaught_violation_keys")).map((r) => r.key)).toEqual([
          "insert:new",
        ]);
        const [recorded] = await db.rows<{ result: string; operations: string }>(
          "SELECT result, operations FROM maintenance_runs WHERE id = $1",
          [run.runId],
        );
        expect(recorded?.result).toBe("success");
        expect(JSON.parse(recorded?.operations ?? "[]")).toEqual(run.operations);
        // Deliveries now have a partition: the worker's timeline lands.
        const effects = testEffects(db, { timeline: true });
        await effects.once({ tenant: "t", key: uniqueKey(), jobType: "j" }, () => 1);
        expect(await effects.flush()).toBe(true);
        await effects.close();
      } finally {
        await db.drop();
      }
    });

    it("never drops the catch-all p_start, nor a MAXVALUE partition, however old the rest", async () => {
      const db = await oldDatabase();
      try {
        await db.run("ALTER TABLE delivery_timeline REMOVE PARTITIONING");
        await db.run(
          `ALTER TABLE delivery_timeline PARTITION BY RANGE COLUMNS (delivered_at) (PARTITION p_start VALUES LESS THAN ('2000-01-01 00:00:00'), PARTITION p${ymd(-10)} VALUES LESS THAN ('${toMysqlTime(day(-9))}'), PARTITION p${ymd(-9)} VALUES LESS THAN ('${toMysqlTime(day(-8))}'), PARTITION p_rest VALUES LESS THAN (MAXVALUE))`,
        );
        const plan = await planMaintenance(db.pool as unknown as MysqlPoolLike, { schema: db.schema, now: day(30) });
        expect(plan.partitions.map((p) => [p.name, p.action])).toEqual([
          ["p_start", "keep"],
          [`p${ymd(-10)}`, "drop"],
          [`p${ymd(-9)}`, "keep"],
          ["p_rest", "keep"],
        ]);
      } finally {
        await db.drop();
      }
    });

    it("runs one at a time: a second runner is skipped while the first holds the lease", async () => {
      const db = await oldDatabase();
      try {
        let release!: () => void;
        const held = new Promise<void>((resolve) => {
          release = resolve;
        });
        let locked!: () => void;
        const inside = new Promise<void>((resolve) => {
          locked = resolve;
        });
        const first = maintain(db.pool as unknown as MysqlPoolLike, {
          schema: db.schema,
          logger: silentLogger(),
          afterLock: async () => {
            locked();
            await held;
          },
        });
        await inside;
        const second = await maintain(db.pool as unknown as MysqlPoolLike, { schema: db.schema, logger: silentLogger() });
        expect(second.result).toBe("skipped");
        release();
        expect((await first).result).toBe("success");
        // Released: the next run takes it.
        expect((await maintain(db.pool as unknown as MysqlPoolLike, { schema: db.schema, logger: silentLogger() })).result).toBe(
          "success",
        );
      } finally {
        await db.drop();
      }
    });

    it("a DROP PARTITION behind an open transaction gives up after a short metadata-lock wait, claims go on, the next run drops it", async () => {
      const db = await oldDatabase();
      try {
        await db.run("UPDATE retention_settings SET retention_days = 1 WHERE id = 1");
        // Make yesterday's partition expire by moving the manager's clock a day ahead.
        const later = new Date(Date.now() + DAY);
        const oldest = `p${ymd(-1)}`;
        expect(
          (await planMaintenance(db.pool as unknown as MysqlPoolLike, { schema: db.schema, now: later })).partitions,
        ).toContainEqual(expect.objectContaining({ name: oldest, action: "drop" }));
        // A transaction that read the timeline and is still open holds its metadata lock.
        const reader = await db.begin();
        await (reader.tx as unknown as MysqlPoolLike).query("SELECT COUNT(*) FROM delivery_timeline");
        try {
          const blocked = await maintain(db.pool as unknown as MysqlPoolLike, {
            schema: db.schema,
            logger: silentLogger(),
            now: later,
            lockTimeoutMs: 1000,
            attempts: 2,
          });
          expect(blocked.result).toBe("failed");
          expect(blocked.operations).toContainEqual(
            expect.objectContaining({ kind: "drop", partition: oldest, result: "failed" }),
          );
          // Claims never touch the timeline's metadata: they go on.
          const effects = testEffects(db, { timeline: false });
          expect((await effects.once({ tenant: "t", key: uniqueKey(), jobType: "j" }, () => 1)).result).toBe("ran");
          await effects.close();
        } finally {
          await reader.rollback();
          reader.release();
        }
        const next = await maintain(db.pool as unknown as MysqlPoolLike, {
          schema: db.schema,
          logger: silentLogger(),
          now: later,
        });
        expect(next.result).toBe("success");
        expect(next.operations).toContainEqual(expect.objectContaining({ kind: "drop", partition: oldest, result: "ok" }));
        expect(await timelinePartitions(db)).not.toContain(oldest);
      } finally {
        await db.drop();
      }
    });

    it("migrate() premakes a week of the timeline's partitions from yesterday", async () => {
      const db = await createEngineDatabase("mariadb", { poolSize: 2 });
      try {
        await migrate(db.pool as unknown as MysqlPoolLike, { schema: db.schema, partitionsAhead: 7 });
        const partitions = await timelinePartitions(db);
        for (let k = -1; k <= 7; k++) expect(partitions).toContain(`p${ymd(k)}`);
      } finally {
        await db.drop();
      }
    });
  });
}, ["mariadb"]);

let keys = 0;
const uniqueKey = () => `capture:maint-${++keys}-${Math.random().toString(36).slice(2, 7)}`;
