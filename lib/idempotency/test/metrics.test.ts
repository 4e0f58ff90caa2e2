import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { GAP_BUCKET_BOUNDS } from "../admin";
import type { EffectsDb } from "../db";
import { createEffects, defaultRegistry, serveMetrics } from "../index";
import { withEachEngine } from "./engine-suite";
import type { EngineDatabase } from "./engines";
import { captureLogger, silentLogger } from "./helpers";

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 10 });
});
afterAll(async () => {
  await db?.drop();
});

describe("metrics", () => {
  it("exposes the idem_ metrics with job_type labels and never a tenant or key label", async () => {
    const registry = new Registry();
    const effects = createEffects({ db: db.pool, registry, logger: silentLogger(), rollups: false });
    await effects.once({ tenant: "acme", key: "capture:m-1", jobType: "order.capture", attempt: 1 }, () => 1);
    await effects.once({ tenant: "acme", key: "capture:m-1", jobType: "order.capture", attempt: 2 }, () => 1);
    const text = await registry.metrics();
    for (const name of [
      "idem_claims_total",
      "idem_duplicate_suppressions_total",
      "idem_key_reuse_total",
      "idem_unique_violations_uncaught_total",
      "idem_deliveries_total",
      "idem_redelivery_gap_seconds_bucket",
      "idem_claim_duration_seconds_bucket",
      "idem_abandoned_total",
    ]) {
      expect(text).toContain(name);
    }
    expect(text).toContain('idem_claims_total{job_type="order.capture",result="claimed"} 1');
    expect(text).toContain('idem_deliveries_total{job_type="order.capture",redelivered="true"} 1');
    expect(text).toContain('idem_redelivery_gap_seconds_bucket{le="2592000",job_type="order.capture"} 1');
    expect(text).not.toMatch(/tenant=|key=/);
  });

  it("anchors the default registry on globalThis and shares it between instances", async () => {
    const a = createEffects({ db: db.pool, logger: silentLogger(), rollups: false });
    const b = createEffects({ db: db.pool, logger: silentLogger(), rollups: false });
    expect(a.registry).toBe(defaultRegistry());
    expect(b.registry).toBe(globalThis.__onceboardIdemRegistry);
    await b.once({ tenant: "acme", key: "capture:global-1", jobType: "global.test" }, () => 1);
    expect(await defaultRegistry().getSingleMetricAsString("idem_claims_total")).toContain('job_type="global.test"');
  });

  it("serves /metrics for a worker process", async () => {
    const registry = new Registry();
    const effects = createEffects({ db: db.pool, registry, logger: silentLogger(), rollups: false });
    await effects.once({ tenant: "acme", key: "capture:served-1", jobType: "served" }, () => 1);
    const server = await serveMetrics({ port: 0, host: "127.0.0.1", registry });
    try {
      const response = await fetch(server.url);
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('idem_claims_total{job_type="served",result="claimed"} 1');
      expect((await fetch(server.url.replace("/metrics", "/nope"))).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  it("uses the same gap buckets as onceboard_gap_bucket_bounds()", async () => {
    const { rows } = await db.pool.query<{ b: number[] }>("SELECT onceboard_gap_bucket_bounds() AS b");
    expect(rows[0]?.b).toEqual([...GAP_BUCKET_BOUNDS]);
  });
});

describe("the duplicate ledger's flush on PostgreSQL", () => {
  it("applies on its own an entry whose row the joined UPDATE passed over, and every entry exactly once", async () => {
    const registry = new Registry();
    const effects = createEffects({ db: db.pool, registry, logger: silentLogger(), rollups: false, flushInterval: 0 });
    const keys = ["capture:pass-1", "capture:pass-2", "capture:pass-3"];
    for (const key of keys) {
      await effects.once({ tenant: "acme", key, jobType: "ledger-pass" }, () => 1);
      for (const messageId of ["m-a", "m-b"])
        expect((await effects.once({ tenant: "acme", key, jobType: "ledger-pass", messageId }, () => 1)).result).toBe(
          "duplicate",
        );
    }
    // The joined UPDATE passes over one row that is there, once, as PostgreSQL 18 was seen to do
    // under two workers' concurrent flushes: a row trigger that skips that row's first update.
    await db.pool.query("CREATE TABLE onceboard.pass_over (key text PRIMARY KEY, passed boolean NOT NULL DEFAULT false)");
    await db.pool.query(`CREATE FUNCTION onceboard.pass_over() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE onceboard.pass_over SET passed = true WHERE key = NEW.key AND NOT passed;
        IF FOUND THEN RETURN NULL; END IF;
        RETURN NEW;
      END $$`);
    await db.pool.query(
      "CREATE TRIGGER pass_over BEFORE UPDATE ON onceboard.effects FOR EACH ROW EXECUTE FUNCTION onceboard.pass_over()",
    );
    await db.pool.query("INSERT INTO onceboard.pass_over (key) VALUES ($1)", [keys[1]]);
    try {
      expect(await effects.flush()).toBe(true);
      expect((await db.pool.query("SELECT passed FROM onceboard.pass_over")).rows).toEqual([{ passed: true }]);
      const { rows } = await db.pool.query<{ key: string; duplicate_count: number }>(
        "SELECT key, duplicate_count FROM onceboard.effects WHERE key = ANY($1) ORDER BY key",
        [keys],
      );
      expect(rows).toEqual(keys.map((key) => ({ key, duplicate_count: 2 })));
      expect(await registry.getSingleMetricAsString("idem_duplicate_counts_dropped_total")).toContain(
        "idem_duplicate_counts_dropped_total 0",
      );
    } finally {
      await db.pool.query("DROP TRIGGER pass_over ON onceboard.effects");
      await db.pool.query("DROP FUNCTION onceboard.pass_over()");
      await db.pool.query("DROP TABLE onceboard.pass_over");
      await effects.close();
    }
  });
});

/** The engine's database for the rollups' tests (PostgreSQL's and MariaDB's rows compared alike). */
let edb: EngineDatabase;

/** `pool` whose statements whose text contains `marker` fail while `failing()`: a database that went away for them. */
function flakyPool(pool: EffectsDb, marker: string, failing: () => boolean): EffectsDb {
  const flaky = Object.create(pool) as Record<string, unknown>;
  for (const method of ["query", "execute"]) {
    const original = (pool as unknown as Record<string, unknown>)[method];
    if (typeof original !== "function") continue;
    flaky[method] = (...args: unknown[]) => {
      const first = args[0] as { text?: string } | string;
      const text = typeof first === "string" ? first : (first.text ?? "");
      if (failing() && text.includes(marker)) return Promise.reject(new Error("database went away"));
      return (original as (...a: unknown[]) => unknown).apply(pool, args);
    };
  }
  return flaky as unknown as EffectsDb;
}

const parsed = (value: unknown) => (typeof value === "string" ? JSON.parse(value) : value);

withEachEngine(
  (made) => {
    if (made) edb = made;
  },
  (engine) =>
    describe("per-minute rollups", () => {
      it("flushes one row per job type with counts and gap buckets, marks a marked instance's rows, and adds up across flushes", async () => {
        const effects = createEffects({
          db: edb.pool,
          schema: edb.schema,
          registry: new Registry(),
          logger: silentLogger(),
          marked: true,
          flushInterval: 0,
        });
        const input = { tenant: "demo", key: "capture:r-1", jobType: "rollup.a", attempt: 1 };
        await effects.once(input, () => 1);
        await effects.once({ ...input, attempt: 2 }, () => 1);
        await effects.once({ ...input, attempt: 3 }, () => 1);
        await effects.once({ tenant: "demo", key: "other:r-1", jobType: "rollup.b" }, () => 1);
        await effects
          .once({ tenant: "demo", key: "insert:r-1", jobType: "rollup.a", messageId: "m-violating" }, () =>
            edb.run("INSERT INTO things VALUES ('a'), ('a')"),
          )
          .catch(() => {});
        expect(await effects.flush()).toBe(true);
        await effects.once({ ...input, attempt: 4 }, () => 1);
        await effects.close();

        const rows = (
          await edb.rows<Record<string, unknown>>(
            "SELECT job_type, claims, suppressed, deliveries, redeliveries, failed, uncaught_violations, gap_buckets, marked FROM worker_stats_minute WHERE job_type LIKE 'rollup.%' ORDER BY job_type",
          )
        ).map((r) => ({ ...r, gap_buckets: parsed(r.gap_buckets), marked: Boolean(r.marked) }) as Record<string, unknown>);
        // Both flushes may land in one minute or straddle two: sum per job type.
        const sum = (jobType: string, column: string) =>
          rows.filter((r) => r.job_type === jobType).reduce((s, r) => s + Number(r[column]), 0);
        expect(sum("rollup.a", "claims")).toBe(5);
        expect(sum("rollup.a", "suppressed")).toBe(3);
        expect(sum("rollup.a", "deliveries")).toBe(5);
        expect(sum("rollup.a", "redeliveries")).toBe(3);
        expect(sum("rollup.a", "failed")).toBe(1);
        expect(sum("rollup.a", "uncaught_violations")).toBe(1);
        expect(sum("rollup.b", "claims")).toBe(1);
        const buckets = rows.filter((r) => r.job_type === "rollup.a").map((r) => r.gap_buckets as number[]);
        expect(buckets[0]).toHaveLength(GAP_BUCKET_BOUNDS.length + 1);
        const total = buckets.flat().reduce((s, v) => s + Number(v), 0);
        expect(total).toBe(3);
        expect(rows.every((r) => r.marked === true)).toBe(true);
        const violations = (
          await edb.rows<Record<string, unknown>>(
            "SELECT constraint_name, count, marked, last_tenant_id, last_key, last_message_id FROM uncaught_violations_minute WHERE job_type = 'rollup.a'",
          )
        ).map((r) => ({ ...r, count: Number(r.count), marked: Boolean(r.marked) }));
        // The rollup only counts (for the charts): the key is in its own row, written when it happened.
        expect(violations).toEqual([
          {
            // MySQL names every primary key PRIMARY, whatever the DDL called it.
            constraint_name: engine === "postgres" ? "things_pkey" : "PRIMARY",
            count: 1,
            marked: true,
            last_tenant_id: null,
            last_key: null,
            last_message_id: null,
          },
        ]);
        const keyRows = await edb.rows<Record<string, unknown>>({
          pg: "SELECT tenant_id, key, message_id, marked FROM uncaught_violation_keys WHERE job_type = 'rollup.a'",
          mysql: "SELECT tenant_id, `key`, message_id, marked FROM uncaught_violation_keys WHERE job_type = 'rollup.a'",
        });
        expect(keyRows.map((r) => ({ ...r, marked: Boolean(r.marked) }))).toEqual([
          { tenant_id: "demo", key: "insert:r-1", message_id: "m-violating", marked: true },
        ]);
        expect((await edb.effects("demo", "capture:r-1"))[0]?.marked).toBe(true);
      });

      it("keeps the counts of a failed flush and writes them later, never failing a job", async () => {
        let failing = true;
        const flaky = flakyPool(edb.pool, "worker_stats_minute", () => failing);
        const registry = new Registry();
        const effects = createEffects({ db: flaky, schema: edb.schema, registry, logger: silentLogger(), flushInterval: 0 });
        for (let i = 0; i < 3; i++) {
          expect(
            (await effects.once({ tenant: "acme", key: `capture:flaky-${i}`, jobType: "rollup.flaky" }, () => i)).result,
          ).toBe("ran");
        }
        expect(await effects.flush()).toBe(false);
        expect(await registry.getSingleMetricAsString("idem_rollup_flush_failures_total")).toContain(
          "idem_rollup_flush_failures_total 1",
        );
        await effects.once({ tenant: "acme", key: "capture:flaky-3", jobType: "rollup.flaky" }, () => 3);
        failing = false;
        await effects.close();
        const [row] = await edb.rows<{ claims: number }>(
          "SELECT sum(claims) AS claims FROM worker_stats_minute WHERE job_type = 'rollup.flaky'",
        );
        expect(Number(row?.claims)).toBe(4);
      });

      it("applies duplicate bookkeeping to the effect row in batches, exactly once even after a failed flush", async () => {
        let failing = true;
        // The duplicate ledger's statement: PostgreSQL's function, MariaDB's UPDATE.
        const flaky = flakyPool(
          edb.pool,
          engine === "postgres" ? "onceboard_apply_duplicates" : "e.duplicate_count + j.n",
          () => failing,
        );
        const effects = createEffects({
          db: flaky,
          schema: edb.schema,
          registry: new Registry(),
          logger: silentLogger(),
          rollups: false,
          flushInterval: 0,
        });
        const input = { tenant: "acme", key: "capture:ledger-1", jobType: "ledger" };
        await effects.once(input, () => 1);
        await effects.once({ ...input, messageId: "m-2" }, () => 1);
        expect(await effects.flush()).toBe(false);
        await effects.once({ ...input, messageId: "m-3" }, () => 1);
        failing = false;
        await effects.close();
        const rows = (await edb.effects("acme", "capture:ledger-1")).map((r) => ({
          duplicate_count: r.duplicate_count,
          last_message_id: r.last_message_id,
          seen: r.last_duplicate_at !== null,
          gap: (r.max_gap_seconds ?? -1) >= 0,
        }));
        expect(rows).toEqual([{ duplicate_count: 2, last_message_id: "m-3", seen: true, gap: true }]);
      });

      it("counts and logs the duplicate counts whose effect row is gone at the flush, and only those", async () => {
        const registry = new Registry();
        const { logger, lines } = captureLogger();
        const effects = createEffects({ db: edb.pool, schema: edb.schema, registry, logger, rollups: false, flushInterval: 0 });
        const kept = { tenant: "acme", key: "capture:ledger-kept", jobType: "ledger" };
        const gone = { tenant: "acme", key: "capture:ledger-gone", jobType: "ledger" };
        for (const input of [kept, gone]) {
          await effects.once(input, () => 1);
          expect((await effects.once({ ...input, messageId: "m-again" }, () => 1)).result).toBe("duplicate");
        }
        // Pruned (or deleted by hand) between the duplicate and the flush.
        await edb.rows({ pg: "DELETE FROM effects WHERE key = $1", mysql: "DELETE FROM effects WHERE `key` = ?" }, [gone.key]);
        expect(await effects.flush()).toBe(true);
        expect(await registry.getSingleMetricAsString("idem_duplicate_counts_dropped_total")).toContain(
          "idem_duplicate_counts_dropped_total 1",
        );
        expect(lines.filter((l) => String(l.msg).includes("found no effect row")).map((l) => l.entries)).toEqual([1]);
        expect((await edb.effects("acme", kept.key)).map((r) => r.duplicate_count)).toEqual([1]);
        await effects.close();
      });
    }),
  {
    poolSize: 10,
    setup: (made) =>
      made.script({
        pg: "CREATE TABLE things (id text CONSTRAINT things_pkey PRIMARY KEY)",
        mysql: ["CREATE TABLE things (id VARCHAR(64), CONSTRAINT things_pkey PRIMARY KEY (id))"],
      }),
  },
);
