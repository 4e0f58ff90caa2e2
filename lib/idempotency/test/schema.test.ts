import pg from "pg";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { maintain, planMaintenance, readLibraryMigrations } from "../admin";
import { InvalidEffectsOptionsError } from "../errors";
import { createEffects, migrate } from "../index";
import {
  LOCK_PARTITIONS,
  maintenanceLockKey,
  partitionsLockKey,
  RELEASE_MAINTENANCE_LOCK,
  TRY_MAINTENANCE_LOCK,
} from "../maintenance-sql";
import { silentLogger } from "./helpers";

/**
 * The library owns its schema. Everything here runs on a pool whose connections have the
 * server's default search_path (no `onceboard`, no custom schema on it), in a schema of another
 * name: a statement or function body that names a table without its schema fails here.
 */
const SCHEMA = "jobs_once";

let db: TestDatabase;
let pool: pg.Pool;
beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 2 });
  const plain = new URL(db.url);
  plain.searchParams.delete("options");
  pool = new pg.Pool({ connectionString: plain.toString(), max: 6 });
  pool.on("error", () => {});
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

describe("the library in a schema of its own name", () => {
  it("migrate() installs it, idempotently and concurrently; createEffects, steps, batches, rollups, registration and maintenance all work there", async () => {
    const runs = await Promise.all([migrate(pool, { schema: SCHEMA }), migrate(pool, { schema: SCHEMA })]);
    expect(runs.map((r) => r.applied.length).sort()).toEqual([0, readLibraryMigrations().length]);
    expect((await migrate(pool, { schema: SCHEMA })).applied).toEqual([]);
    expect((await pool.query("SHOW search_path")).rows[0].search_path).not.toContain(SCHEMA);

    const effects = createEffects({
      db: pool,
      schema: SCHEMA,
      registry: new Registry(),
      logger: silentLogger(),
      flushInterval: 0,
      register: true,
    });
    try {
      await effects.ready();
      let charges = 0;
      const charge = (messageId: string) =>
        effects.once(
          { tenant: "acme", key: "capture:ord-1", jobType: "order.capture", messageId, redelivered: messageId !== "m1" },
          () => {
            charges++;
            return { chargeId: "ch_1" };
          },
        );
      expect((await charge("m1")).result).toBe("ran");
      expect((await charge("m2")).result).toBe("duplicate");
      expect(charges).toBe(1);

      await effects.job({ tenant: "acme", jobType: "order.paid", messageId: "m3" }, async (job) => {
        await job.transaction("mark-paid:ord-1", async (tx) => {
          await (tx as pg.PoolClient).query("SELECT 1");
          return { paid: true };
        });
        await job.external("receipt:ord-1", () => "sent");
      });
      const batch = await effects.claimMany([
        { tenant: "acme", key: "capture:ord-1", jobType: "order.capture" },
        { tenant: "acme", key: "capture:ord-2", jobType: "order.capture" },
      ]);
      expect(batch.map((b) => b.kind)).toEqual(["duplicate", "owned"]);
      expect(await effects.flush()).toBe(true);
    } finally {
      await effects.close();
    }

    const counts = await pool.query(
      `SELECT (SELECT count(*)::int FROM ${SCHEMA}.effects) AS effects,
              (SELECT coalesce(sum(claims), 0)::int FROM ${SCHEMA}.worker_stats_minute) AS claims,
              (SELECT coalesce(sum(claims), 0)::int FROM ${SCHEMA}.worker_stats_hour) AS hourly,
              (SELECT coalesce(sum(claims), 0)::int FROM ${SCHEMA}.worker_stats_6h) AS six_hourly,
              (SELECT coalesce(sum(b), 0)::int FROM ${SCHEMA}.claim_latency_minute, unnest(buckets) AS b) AS latency,
              (SELECT coalesce(sum(b), 0)::int FROM ${SCHEMA}.claim_latency_6h, unnest(buckets) AS b) AS six_hourly_latency,
              (SELECT coalesce(sum(b), 0)::int FROM ${SCHEMA}.worker_stats_minute, unnest(gap_buckets) AS b) AS gaps,
              (SELECT coalesce(sum(b), 0)::int FROM ${SCHEMA}.worker_stats_hour, unnest(gap_buckets) AS b) AS hourly_gaps,
              (SELECT count(*)::int FROM onceboard.effects) AS default_schema_effects`,
    );
    expect(counts.rows[0]).toMatchObject({ effects: 4, default_schema_effects: 0 });
    expect(counts.rows[0].claims).toBeGreaterThan(0);
    expect(counts.rows[0].hourly).toBe(counts.rows[0].claims);
    // The six-hour level's triggers write into this schema's tables, not onceboard's.
    expect(counts.rows[0].six_hourly).toBe(counts.rows[0].claims);
    expect(counts.rows[0].latency).toBeGreaterThan(0);
    expect(counts.rows[0].six_hourly_latency).toBe(counts.rows[0].latency);
    // The one hourly table holds the gap histogram too (a duplicate arrived: one gap sample).
    expect(counts.rows[0].gaps).toBeGreaterThan(0);
    expect(counts.rows[0].hourly_gaps).toBe(counts.rows[0].gaps);

    const run = await maintain(pool, { schema: SCHEMA, trigger: "test" });
    expect(run.result).toBe("success");
    const plan = await planMaintenance(pool, { schema: SCHEMA });
    expect(plan.runwayHours).toBeGreaterThan(24);
    const { rows: runs2 } = await pool.query(`SELECT result FROM ${SCHEMA}.maintenance_runs`);
    expect(runs2.map((r) => r.result)).toEqual(["success"]);
  });

  it("two installations in one database do not block each other: maintenance and premake locks are per schema", async () => {
    const other = "jobs_twice";
    await migrate(pool, { schema: SCHEMA });
    await migrate(pool, { schema: other });
    const holder = await pool.connect();
    try {
      // One installation's maintenance run holds its session lock: the other's run goes ahead, its own skips.
      expect((await holder.query(TRY_MAINTENANCE_LOCK, [maintenanceLockKey(SCHEMA)])).rows[0].locked).toBe(true);
      expect((await maintain(pool, { schema: other, trigger: "test", logger: silentLogger() })).result).toBe("success");
      expect((await maintain(pool, { schema: SCHEMA, trigger: "test", logger: silentLogger() })).result).toBe("skipped");

      // And sits in its partitions lock (a transaction: kept out of the runs above, whose CREATE
      // INDEX CONCURRENTLY waits for every open transaction): the other's premake goes ahead.
      await holder.query("BEGIN");
      await holder.query(LOCK_PARTITIONS, [partitionsLockKey(SCHEMA)]);
      const premake = await pool.connect();
      try {
        await premake.query("SET lock_timeout = '2s'");
        await premake.query(`SELECT ${other}.onceboard_ensure_partitions(current_date, current_date + 1)`);
        // The same installation's premake waits for the holder (and times out here).
        await expect(
          premake.query(`SELECT ${SCHEMA}.onceboard_ensure_partitions(current_date, current_date + 1)`),
        ).rejects.toMatchObject({ code: "55P03" });
      } finally {
        premake.release();
      }
      await holder.query("COMMIT");
    } finally {
      await holder.query(RELEASE_MAINTENANCE_LOCK, [maintenanceLockKey(SCHEMA)]).catch(() => {});
      holder.release();
    }
  });

  it("refuses a schema name that is not a plain lower-case identifier, naming the field", async () => {
    for (const schema of ["Jobs", "a;drop", "pg_x", "", "x".repeat(64)]) {
      expect(() => createEffects({ db: pool, schema })).toThrow(InvalidEffectsOptionsError);
      await expect(migrate(pool, { schema })).rejects.toThrow(/schema must be a lower-case PostgreSQL identifier/);
    }
  });
});
