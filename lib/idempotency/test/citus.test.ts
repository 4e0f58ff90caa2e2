import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import pg from "pg";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { releaseClaim } from "../admin";
import { CITUS_DELEGATED_FUNCTIONS, detectCitus } from "../citus";
import { sqlFor } from "../db";
import { CitusSetupError } from "../errors";
import { createEffects, type EffectsOptions, migrate } from "../index";
import { maintain } from "../maintenance";
import { findTestCitus, installOnCitus, workerPortOf } from "./citus-cluster";
import { silentLogger, sleep } from "./helpers";

/**
 * The Citus tier (docs/scaling.md): the library's contract on a real cluster, a coordinator with two
 * workers (CITUS_URL; scripts/citus-cluster.sh starts one). Each run installs the library in its own
 * schema on the coordinator and distributes it as `npm run db:migrate -- --citus` does. Without
 * CITUS_URL every test here is skipped, with a loud notice.
 */
const citusUrl = await findTestCitus();
const SCHEMA = `ob_citus_${process.pid}_${randomBytes(2).toString("hex")}`;
const BROKEN_SCHEMA = `${SCHEMA}_undistributed`;
const uniq = (name: string) => `${name}-${randomBytes(4).toString("hex")}`;

let pool: pg.Pool;
/** Two tenants whose shards are on different workers. */
let tenants: [string, string];

/** The library on the coordinator (`pool`, unless `options.db` names another pool). */
function citusEffects(options: Partial<EffectsOptions> = {}) {
  return createEffects({
    db: pool,
    schema: SCHEMA,
    registry: new Registry(),
    logger: silentLogger(),
    rollups: false,
    flushInterval: 0,
    register: false,
    ...options,
  });
}

/** The steps' own table, distributed beside effects so a step's write and its claim share a worker. */
async function ledgerTable() {
  await pool.query(
    `CREATE TABLE IF NOT EXISTS ${SCHEMA}.ledger (tenant_id text NOT NULL, key text NOT NULL, amount int NOT NULL, PRIMARY KEY (tenant_id, key))`,
  );
  await pool.query(
    `SELECT create_distributed_table('${SCHEMA}.ledger', 'tenant_id', colocate_with := '${SCHEMA}.effects')
        WHERE NOT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = '${SCHEMA}.ledger'::regclass)`,
  );
}

/** A charge step run twice: it runs once, its duplicate gets its outcome, and it wrote one ledger row. */
async function expectChargedOnce(tenant: string, key: string, step: () => Promise<unknown>) {
  expect(await step()).toMatchObject({ result: "ran", outcome: "charged" });
  expect(await step()).toMatchObject({ result: "duplicate", outcome: "charged" });
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.ledger WHERE tenant_id = $1 AND key = $2`, [
    tenant,
    key,
  ]);
  expect(rows[0].n).toBe(1);
}

async function effectRow(tenant: string, key: string) {
  const { rows } = await pool.query(
    `SELECT status, attempt, outcome, duplicate_count, created_at FROM ${SCHEMA}.effects WHERE tenant_id = $1 AND key = $2`,
    [tenant, key],
  );
  return rows;
}

describe.skipIf(!citusUrl)("the library on a Citus cluster (CITUS_URL)", () => {
  beforeAll(async () => {
    const url = citusUrl as string;
    pool = new pg.Pool({ connectionString: url, max: 20 });
    pool.on("error", () => {});
    await installOnCitus(url, SCHEMA);
    const candidates = Array.from({ length: 40 }, (_, i) => `tenant-${i}`);
    const ports = await workerPortOf(pool, SCHEMA, candidates);
    const byPort = new Map<number, string>();
    for (const t of candidates) if (!byPort.has(ports.get(t) as number)) byPort.set(ports.get(t) as number, t);
    const found = [...byPort.values()];
    if (found.length < 2) throw new Error("no two tenants on different workers among 40");
    tenants = [found[0] as string, found[1] as string];
  });
  afterAll(async () => {
    if (!pool) return;
    await pool.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`).catch(() => {});
    await pool.query(`DROP SCHEMA IF EXISTS ${BROKEN_SCHEMA} CASCADE`).catch(() => {});
    await pool.end();
  });

  it("detects the distributed effects table and its delegated functions", async () => {
    expect(await detectCitus(sqlFor(pool, false, SCHEMA), SCHEMA)).toBe(true);
    const ports = await workerPortOf(pool, SCHEMA, tenants);
    expect(new Set(ports.values()).size).toBe(2);
  });

  it("refuses to claim, with one typed error, when effects is distributed but its functions are not", async () => {
    await migrate(citusUrl as string, { schema: BROKEN_SCHEMA });
    await pool.query(`SELECT create_distributed_table('${BROKEN_SCHEMA}.effects', 'tenant_id', colocate_with := 'none')`);
    const effects = createEffects({
      db: pool,
      schema: BROKEN_SCHEMA,
      registry: new Registry(),
      logger: silentLogger(),
      rollups: false,
      register: false,
    });
    let ran = 0;
    const error = await effects.once({ tenant: tenants[0], key: "send:refused", jobType: "j" }, () => ran++).catch((e) => e);
    expect(error).toBeInstanceOf(CitusSetupError);
    expect(error.message).toContain("onceboard_claim(");
    expect(error.message).toContain("db:migrate -- --citus");
    expect(ran).toBe(0);
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${BROKEN_SCHEMA}.effects`);
    expect(rows[0].n).toBe(0);
    // The console's release too: its lock would be taken on the coordinator.
    const release = await releaseClaim(pool, {
      tenant: tenants[0],
      key: "send:refused",
      releasedBy: "op",
      schema: BROKEN_SCHEMA,
    }).catch((e) => e);
    expect(release).toBeInstanceOf(CitusSetupError);
    await effects.close();
  });

  it("the console's release of a stuck claim on both workers: marked failed, and the next delivery runs it once", async () => {
    const effects = citusEffects({ wait: "20s" });
    for (const tenant of tenants) {
      const stuck = uniq("capture:stuck");
      await pool.query(
        // created_at in milliseconds, as onceboard_claim makes it: a completion names its row by it.
        `INSERT INTO ${SCHEMA}.effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until, created_at)
         VALUES ($1, $2, 'citus.release', 'in_progress', 'external', 1, 'gone-worker', now() - interval '1 second',
                 date_trunc('milliseconds', now()))`,
        [tenant, stuck],
      );
      const alive = uniq("capture:alive");
      await pool.query(
        `INSERT INTO ${SCHEMA}.effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until)
         VALUES ($1, $2, 'citus.release', 'in_progress', 'external', 1, 'busy-worker', now() + interval '1 hour')`,
        [tenant, alive],
      );
      expect(await releaseClaim(pool, { tenant, key: stuck, releasedBy: "op@test", schema: SCHEMA })).toEqual({
        released: true,
        attempt: 1,
      });
      const [row] = await pool
        .query(`SELECT status, lease_until, error FROM ${SCHEMA}.effects WHERE tenant_id = $1 AND key = $2`, [tenant, stuck])
        .then((r) => r.rows);
      expect(row).toEqual({
        status: "failed",
        lease_until: null,
        error: "released by op@test after the lease of attempt 1 (gone-worker) expired",
      });
      expect(await releaseClaim(pool, { tenant, key: alive, releasedBy: "op@test", schema: SCHEMA })).toMatchObject({
        released: false,
        reason: "lease_alive",
        effect: { status: "in_progress", owner: "busy-worker", attempt: 1 },
      });
      expect(await releaseClaim(pool, { tenant, key: uniq("capture:none"), releasedBy: "op@test", schema: SCHEMA })).toEqual({
        released: false,
        reason: "not_found",
        effect: null,
      });
      let runs = 0;
      const redelivered = await Promise.all(
        Array.from({ length: 10 }, () =>
          effects.once({ tenant, key: stuck, jobType: "citus.release", redelivered: true }, () => {
            runs += 1;
            return "after release";
          }),
        ),
      );
      expect(runs).toBe(1);
      expect(redelivered.every((r) => r.outcome === "after release")).toBe(true);
      expect((await effectRow(tenant, stuck))[0]).toMatchObject({ status: "completed", attempt: 2 });
    }
    await effects.close();
  });

  describe.each([{ coalesce: true }, { coalesce: false }])("coalesce $coalesce", ({ coalesce }) => {
    it("50 concurrent copies of one key: the body runs once, every copy gets its outcome", async () => {
      const effects = citusEffects({ coalesce, wait: "30s" });
      for (const tenant of tenants) {
        const key = uniq("capture:order");
        let runs = 0;
        const results = await Promise.all(
          Array.from({ length: 50 }, () =>
            effects.once({ tenant, key, jobType: "citus.capture" }, async () => {
              runs += 1;
              await sleep(30);
              return { captured: key };
            }),
          ),
        );
        expect(runs).toBe(1);
        expect(results.filter((r) => r.result === "ran")).toHaveLength(1);
        expect(results.every((r) => (r.outcome as { captured: string }).captured === key)).toBe(true);
        const rows = await effectRow(tenant, key);
        expect(rows).toHaveLength(1);
        expect(rows[0]).toMatchObject({ status: "completed", attempt: 1 });
      }
      // The duplicates' bookkeeping reaches the rows (one tenant-scoped call per tenant).
      expect(await effects.flush()).toBe(true);
      const { rows } = await pool.query(
        `SELECT sum(duplicate_count)::int AS n FROM ${SCHEMA}.effects WHERE job_type = 'citus.capture' AND tenant_id = ANY($1)`,
        [tenants],
      );
      expect(rows[0].n).toBeGreaterThanOrEqual(coalesce ? 2 * 49 : 2 * 49);
      await effects.close();
    });

    it("counts the duplicate counts whose effect row is gone at the flush, on both workers, and only those", async () => {
      const registry = new Registry();
      const effects = citusEffects({ registry });
      const keys = (tenant: string) => ({ kept: uniq(`${tenant}:kept`), gone: uniq(`${tenant}:gone`) });
      const byTenant = tenants.map((tenant) => ({ tenant, ...keys(tenant) }));
      for (const { tenant, kept, gone } of byTenant)
        for (const key of [kept, gone]) {
          await effects.once({ tenant, key, jobType: "citus.ledger" }, () => 1);
          expect((await effects.once({ tenant, key, jobType: "citus.ledger", messageId: "m-again" }, () => 1)).result).toBe(
            "duplicate",
          );
        }
      // Pruned (or deleted by hand) between the duplicates and the flush: one row on each worker.
      await pool.query(`DELETE FROM ${SCHEMA}.effects WHERE key = ANY($1)`, [byTenant.map((t) => t.gone)]);
      expect(await effects.flush()).toBe(true);
      expect(await registry.getSingleMetricAsString("idem_duplicate_counts_dropped_total")).toContain(
        "idem_duplicate_counts_dropped_total 2",
      );
      for (const { tenant, kept } of byTenant) expect((await effectRow(tenant, kept)).map((r) => r.duplicate_count)).toEqual([1]);
      await effects.close();
    });

    it("mixed-tenant onceMany across both workers: each key runs once, a second batch is all duplicates", async () => {
      const effects = citusEffects({ coalesce });
      const inputs = Array.from({ length: 24 }, (_, i) => ({
        tenant: i % 3 === 0 ? tenants[0] : i % 3 === 1 ? tenants[1] : `tenant-extra-${i % 5}`,
        key: uniq(`send:mixed-${i}`),
        jobType: "citus.mixed",
      }));
      let runs = 0;
      const first = await effects.onceMany(inputs, (claim) => {
        runs += 1;
        return claim.key;
      });
      expect(runs).toBe(inputs.length);
      expect(first.every((a) => a.ok && a.result.result === "ran")).toBe(true);
      const second = await effects.onceMany(inputs, () => {
        runs += 1;
        return "again";
      });
      expect(runs).toBe(inputs.length);
      expect(second.map((a) => a.ok && a.result.outcome)).toEqual(inputs.map((i) => i.key));
      expect(await effects.flush()).toBe(true);
      const { rows } = await pool.query(
        `SELECT count(*)::int AS n FROM ${SCHEMA}.effects WHERE key = ANY($1) AND status = 'completed' AND duplicate_count = 1`,
        [inputs.map((i) => i.key)],
      );
      expect(rows[0].n).toBe(inputs.length);
      await effects.close();
    });

    it("redeliveries: a completed effect answers from its row; a failed one is retried, never poison", async () => {
      const effects = citusEffects({ coalesce });
      for (const tenant of tenants) {
        const done = uniq("capture:redelivered");
        await effects.once({ tenant, key: done, jobType: "citus.redelivery" }, () => "first");
        const again = await effects.once(
          { tenant, key: done, jobType: "citus.redelivery", redelivered: true, attempt: 2 },
          () => {
            throw new Error("must not run");
          },
        );
        expect(again).toMatchObject({ result: "duplicate", outcome: "first" });

        const failed = uniq("capture:failed");
        await expect(
          effects.once({ tenant, key: failed, jobType: "citus.redelivery" }, () => {
            throw new Error("provider down");
          }),
        ).rejects.toThrow("provider down");
        expect((await effectRow(tenant, failed))[0]).toMatchObject({ status: "failed" });
        const retried = await effects.once(
          { tenant, key: failed, jobType: "citus.redelivery", redelivered: true, attempt: 2 },
          () => "second",
        );
        expect(retried).toMatchObject({ result: "ran", outcome: "second", attempt: 2 });
        expect((await effectRow(tenant, failed))[0]).toMatchObject({ status: "completed", attempt: 2 });
      }
      await effects.close();
    });
  });

  it("a long step extends its lease on the tenant's worker, then completes, fails or abandons there", async () => {
    const effects = citusEffects({ coalesce: false });
    for (const tenant of tenants) {
      for (const end of ["complete", "fail", "abandon"] as const) {
        const key = uniq(`export:long-${end}`);
        const claimed = await effects.claim({ tenant, key, jobType: "citus.extend", lease: "5s" });
        if (claimed.kind !== "owned") throw new Error(`expected to own ${key}, got ${claimed.kind}`);
        const { claim } = claimed;
        const until = await claim.extendLease("10m");
        const [row] = (
          await pool.query(`SELECT lease_until FROM ${SCHEMA}.effects WHERE tenant_id = $1 AND key = $2`, [tenant, key])
        ).rows;
        expect(row.lease_until.getTime()).toBe(until.getTime());
        expect(until.getTime() - Date.now()).toBeGreaterThan(9 * 60_000);
        if (end === "complete") await claim.complete({ rows: 3 });
        else if (end === "fail") await claim.fail(new Error("export failed"));
        else await claim.abandon(new Error("gave up"));
        const [after] = await effectRow(tenant, key);
        expect(after.status).toBe({ complete: "completed", fail: "failed", abandon: "abandoned" }[end]);
      }
    }
    await effects.close();
  });

  it("transactional steps commit with the caller's writes (or roll back with them) on both workers", async () => {
    await ledgerTable();
    const effects = citusEffects();
    for (const tenant of tenants) {
      const key = uniq("charge:order");
      const step = async () => {
        const client = await pool.connect();
        try {
          await client.query("BEGIN");
          const result = await effects.once(
            { tenant, key, jobType: "citus.tx", policy: "transactional", tx: client },
            async (_c, tx) => {
              await (tx as pg.PoolClient).query(`INSERT INTO ${SCHEMA}.ledger VALUES ($1, $2, 100)`, [tenant, key]);
              return "charged";
            },
          );
          await client.query("COMMIT");
          return result;
        } catch (error) {
          await client.query("ROLLBACK");
          throw error;
        } finally {
          client.release();
        }
      };
      await expectChargedOnce(tenant, key, step);

      // A step that throws rolls back its claim with its writes: the next delivery runs it.
      const rolled = uniq("charge:rolled");
      const client = await pool.connect();
      await client.query("BEGIN");
      await expect(
        effects.once({ tenant, key: rolled, jobType: "citus.tx", policy: "transactional", tx: client }, async (_c, tx) => {
          await (tx as pg.PoolClient).query(`INSERT INTO ${SCHEMA}.ledger VALUES ($1, $2, 1)`, [tenant, rolled]);
          throw new Error("declined");
        }),
      ).rejects.toThrow("declined");
      await client.query("ROLLBACK");
      client.release();
      expect(await effectRow(tenant, rolled)).toHaveLength(0);
    }
    await effects.close();
  });

  it("a transactional step in the library's own transaction: BEGIN goes with the claim's EXECUTE, and the step runs once", async () => {
    await ledgerTable();
    // One connection, so the claim prepared by the first step is there for the next ones.
    const own = new pg.Pool({ connectionString: citusUrl as string, max: 1 });
    own.on("error", () => {});
    const sent: string[] = [];
    own.on("connect", (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
        sent.push(typeof config === "string" ? config : (config as { text: string }).text);
        return query(config, ...rest);
      };
    });
    const effects = citusEffects({ db: own });
    for (const tenant of tenants) {
      for (let i = 0; i < 3; i++) {
        const key = uniq("charge:own");
        const step = () =>
          effects.once({ tenant, key, jobType: "citus.tx", policy: "transactional" }, async (_c, tx) => {
            await (tx as pg.PoolClient).query(`INSERT INTO ${SCHEMA}.ledger VALUES ($1, $2, 100)`, [tenant, key]);
            return "charged";
          });
        await expectChargedOnce(tenant, key, step);
        expect(await effectRow(tenant, key)).toMatchObject([{ status: "completed", outcome: "charged" }]);
      }
    }
    expect(
      sent.filter((text) => text.startsWith("BEGIN ISOLATION LEVEL READ COMMITTED; EXECUTE ")).length,
    ).toBeGreaterThanOrEqual(10);
    await effects.close();
    await own.end();
  });

  it("a key claimed yesterday (across midnight) is answered from yesterday's partition, never run again", async () => {
    const effects = citusEffects();
    for (const tenant of tenants) {
      const done = uniq("capture:straddle");
      await pool.query(
        `INSERT INTO ${SCHEMA}.effects (tenant_id, key, job_type, status, policy, attempt, outcome, created_at, updated_at, completed_at)
         VALUES ($1, $2, 'citus.straddle', 'completed', 'external', 1, '"yesterday"', date_trunc('day', now()) - interval '1 minute',
                 date_trunc('day', now()) - interval '1 minute', date_trunc('day', now()) - interval '1 minute')`,
        [tenant, done],
      );
      const answer = await effects.once({ tenant, key: done, jobType: "citus.straddle" }, () => "today");
      expect(answer).toMatchObject({ result: "duplicate", outcome: "yesterday" });

      // In progress since yesterday with its lease run out: taken over in place, once.
      const crashed = uniq("capture:straddle-crashed");
      await pool.query(
        `INSERT INTO ${SCHEMA}.effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until, created_at, updated_at)
         VALUES ($1, $2, 'citus.straddle', 'in_progress', 'external', 1, 'gone', now() - interval '1 second',
                 date_trunc('day', now()) - interval '1 minute', date_trunc('day', now()) - interval '1 minute')`,
        [tenant, crashed],
      );
      const takeovers = await Promise.all(
        Array.from({ length: 10 }, () =>
          effects.once({ tenant, key: crashed, jobType: "citus.straddle", wait: "20s" }, async () => {
            await sleep(20);
            return "redone";
          }),
        ),
      );
      expect(takeovers.filter((r) => r.result === "ran")).toHaveLength(1);
      const rows = await effectRow(tenant, crashed);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ status: "completed", attempt: 2, outcome: "redone" });
    }
    await effects.close();
  });

  it("a worker SIGKILLed mid-step: after its lease one claimer takes over and the step runs once more", async () => {
    for (const tenant of tenants) {
      const key = uniq("capture:killed");
      await runAndKill(tenant, key);
      expect((await effectRow(tenant, key))[0]).toMatchObject({ status: "in_progress", attempt: 1 });
      await sleep(600);
      const effects = citusEffects({ wait: "20s" });
      let runs = 0;
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          effects.once({ tenant, key, jobType: "citus.crash", redelivered: true }, () => {
            runs += 1;
            return "recovered";
          }),
        ),
      );
      expect(runs).toBe(1);
      expect(results.every((r) => r.outcome === "recovered")).toBe(true);
      expect((await effectRow(tenant, key))[0]).toMatchObject({ status: "completed", attempt: 2 });
      await effects.close();
    }
  });

  it("a shard move under load (default mode, online): every key claimed during it runs once", async () => {
    const tenant = tenants[0];
    const { rows: shard } = await pool.query<{ shardid: string; port: number }>(
      `SELECT s.shardid, s.nodeport AS port FROM citus_shards s
        WHERE s.shardid = get_shard_id_for_distribution_column($1::regclass, $2::text)`,
      [`${SCHEMA}.effects`, tenant],
    );
    const from = Number(shard[0]?.port);
    const { rows: nodes } = await pool.query<{ port: number }>(
      "SELECT nodeport AS port FROM pg_dist_node WHERE groupid <> 0 AND noderole = 'primary' AND nodeport <> $1::int ORDER BY nodeport LIMIT 1",
      [from],
    );
    const to = Number(nodes[0]?.port);
    const effects = citusEffects({ wait: "30s" });
    const keys = Array.from({ length: 40 }, (_, i) => uniq(`send:move-${i}`));
    const runs = new Map<string, number>();
    let moving = true;
    const load = (async () => {
      let round = 0;
      while (moving || round < 2) {
        await Promise.all(
          keys.map((key) =>
            effects.once({ tenant, key, jobType: "citus.move" }, () => {
              runs.set(key, (runs.get(key) ?? 0) + 1);
              return key;
            }),
          ),
        );
        round += 1;
      }
    })();
    await pool.query("SELECT citus_move_shard_placement($1::bigint, '127.0.0.1', $2::int, '127.0.0.1', $3::int)", [
      shard[0]?.shardid,
      from,
      to,
    ]);
    moving = false;
    await load;
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect(runs.size).toBe(keys.length);
    expect((await workerPortOf(pool, SCHEMA, [tenant])).get(tenant)).toBe(to);
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM ${SCHEMA}.effects WHERE tenant_id = $1 AND key = ANY($2) AND status = 'completed'`,
      [tenant, keys],
    );
    expect(rows[0].n).toBe(keys.length);
    await effects.close();
  });

  it("retention on Citus: expired partitions are detached (plain DETACH) and dropped", async () => {
    const later = new Date(Date.now() + 400 * 86_400_000);
    const run = await maintain(pool, { schema: SCHEMA, now: later, logger: silentLogger() });
    expect(run.error).toBeUndefined();
    const detached = run.operations.filter((o) => o.kind === "detach");
    expect(detached.length).toBeGreaterThan(0);
    expect(run.operations.filter((o) => o.result === "failed")).toEqual([]);
    expect(run.operations.some((o) => o.kind === "drop" && o.result === "ok")).toBe(true);
  });
});

function runAndKill(tenant: string, key: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "citus-crash-worker.ts")], {
      cwd: path.resolve(import.meta.dirname, "../../.."),
      env: {
        ...process.env,
        CITUS_URL: citusUrl as string,
        CITUS_CRASH_SCHEMA: SCHEMA,
        CITUS_CRASH_TENANT: tenant,
        CITUS_CRASH_KEY: key,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let killed = false;
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (!killed && out.includes("RUNNING")) {
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
      else reject(new Error(`the crash worker was not killed mid-step: ${out}\n${err}`));
    });
  });
}

// One list of what must be delegated: the test above names the first; keep it honest about all.
void CITUS_DELEGATED_FUNCTIONS;
