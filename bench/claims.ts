/**
 * npm run bench:claims — fresh claims per second through the worker library against a raw
 * INSERT … ON CONFLICT DO NOTHING RETURNING into an unpartitioned table, through the same pg pool
 * at the same concurrency, in the same run; then the same for duplicates.
 *
 * Library "fresh claim" = effects.claim(): validation, one onceboard_claim() round trip
 * (advisory lock, look across partitions, insert), metrics and rollups. The completion UPDATE
 * that once() adds afterwards is measured separately (once_per_s) and is not in `ratio`.
 * Library "duplicate" = effects.once() on a completed key: one read-only round trip that returns
 * the stored outcome (the row's duplicate bookkeeping is batched per flush; those flushes are
 * counted as round trips too). Raw duplicate = the same INSERT on an existing key, which returns
 * no row and records nothing.
 *
 * For context (not in `ratio`), each fresh round also times a bare INSERT into effects and the
 * library's own claim statement sent straight through the pool (SQL cost without the library's
 * JavaScript). Round trips are counted by wrapping the pool's query().
 * Batched = effects.claimMany() of BENCH_BATCH fresh keys per call (one round trip, one commit);
 * batch_ratio = batched claims per second / raw single-row inserts per second, alternated.
 * Callers spread their keys over 8 tenants (`bench-0` … `bench-7`), so that on Citus the claims
 * land on every worker; on one server a tenant is only a column of the index.
 * With CITUS_URL (a Citus coordinator with registered workers, docs/scaling.md) the same phases run
 * again there, in a scratch schema distributed as `npm run db:migrate -- --citus` does, its raw table
 * distributed by tenant beside effects; the summary line adds `citus_*` keys. Where the servers run
 * on this machine, each phase of fresh claims also reads the CPU the database's backends used, per
 * node (`*_cpu_ms_per_claim`: one server; a coordinator and its workers).
 * With MARIADB_URL (or --mariadb, which takes mysql://root@127.0.0.1:3306 when MARIADB_URL is unset)
 * the same run measures the library on MariaDB / MySQL too (claims-mysql.ts): against a raw
 * INSERT … ON DUPLICATE KEY UPDATE on the same server, and one caller's cost per fresh claim,
 * duplicate and takeover; the summary line adds `mariadb_*` keys.
 * Env: BENCH_SECONDS (default 4 per phase), BENCH_CONCURRENCY (16), BENCH_BATCH (50),
 * DATABASE_URL (else an embedded PostgreSQL), CITUS_URL (optional), MARIADB_URL (optional),
 * BENCH_SERIAL_OPS (2000, MariaDB's one-caller phase).
 */
import os from "node:os";
import pg from "pg";
import { measureMysql, mysqlPairs } from "./claims-mysql";
import { backendCpuBetween, isLocalServer, type NodeCpu, nodeCpu } from "./cpu";
import { benchNumber } from "./env";
import { RAW_INSERT, RAW_TABLE } from "./raw-insert";
import { type BenchDatabase, benchDatabase, benchEffects, citusBenchDatabase, countRoundTrips, machine, runFor } from "./support";

const SECONDS = benchNumber("BENCH_SECONDS", 4);
const CONCURRENCY = benchNumber("BENCH_CONCURRENCY", 16, { integer: true });
const BATCH = benchNumber("BENCH_BATCH", 50, { integer: true });
/** Claims per block in the one-call-in-flight latency phase (four blocks each way). */
const LONE_CALLS = benchNumber("BENCH_LONE_CALLS", 500, { integer: true });
/** Tenants the callers spread their keys over (caller w uses bench-(w mod TENANTS)). */
const TENANTS = 8;
const log = (line: string) => console.log(`[bench:claims] ${line}`);
const tenantOf = (w: number) => `bench-${w % TENANTS}`;

/**
 * The claim as the database exposes it (the SQL function the library calls, with the library's
 * argument order): measured straight through the pool, it is the SQL's share of a claim's cost.
 * Written out here rather than imported, because bench/ goes through public interfaces only.
 */
const CLAIM_FUNCTION_SQL = `SELECT result, status, attempt, owner, policy, created_at, lease_until, outcome, error, gap_seconds,
       duplicate_count, first_message_id, db_now
  FROM onceboard_claim($1::text, $2::text, $3::text, $4::text, $5::text, $6::text, $7::text,
                       $8::int, $9::int, $10::boolean, $11::boolean)`;

// Not a claim (no lock, no look into older partitions): the floor any design on the partitioned
// effects table pays — tuple routing and four indexes per partition. Printed for context.
const BARE_EFFECTS_INSERT = {
  name: "bench_bare_effects_insert",
  text: `INSERT INTO effects (tenant_id, key, job_type, status, policy, owner, lease_until, first_message_id, last_message_id)
         VALUES ($1, $2, 'bench', 'in_progress', 'once', $3, now() + interval '30 seconds', $4, $4)
         ON CONFLICT DO NOTHING RETURNING key`,
};

/** What one target's phases measured. */
interface Measured {
  libPerS: number;
  rawPerS: number;
  offPerS: number;
  batchPerS: number;
  batchRawPerS: number;
  tripsPerBatch: number;
  roundTrips: number;
  dupLib: number;
  dupRaw: number;
  oncePerS: number;
  onceOffPerS: number;
  lone: { p50: number; p99: number; p50Off: number; p99Off: number };
  /** Backend CPU ms per fresh claim by node role (null where the server is not on this machine). */
  cpuPerClaim: Map<string, number> | null;
  cpuPerUncoalescedClaim: Map<string, number> | null;
  /** This process's CPU ms per fresh claim (the library's JavaScript and the pg driver). */
  clientCpuPerClaim: number;
  serverVersion: string;
}

/** The nodes whose backends serve `database`: the one server, or a coordinator and its workers. */
async function nodesOf(database: BenchDatabase, citus: boolean): Promise<NodeCpu[]> {
  if (!isLocalServer(database.url)) return [];
  const connect = async (url: string) => {
    const client = new pg.Client(url);
    await client.connect();
    return client;
  };
  if (!citus) return [nodeCpu("server", await connect(database.url))];
  const coordinator = await connect(database.url);
  const { rows } = await coordinator.query<{ host: string; port: number }>(
    "SELECT nodename AS host, nodeport AS port FROM pg_catalog.pg_dist_node WHERE groupid <> 0 AND noderole = 'primary' ORDER BY nodeport",
  );
  const nodes = [nodeCpu("coordinator", coordinator)];
  for (const w of rows) {
    const url = new URL(database.url);
    url.hostname = w.host;
    url.port = String(w.port);
    nodes.push(nodeCpu(`worker ${w.port}`, await connect(url.toString())));
  }
  return nodes;
}

async function sampleNodes(nodes: readonly NodeCpu[]) {
  return Promise.all(nodes.map((n) => n.sample()));
}

/** The fresh-claim, batch, once() and duplicate phases on one database. */
async function measure(database: BenchDatabase, citus: boolean): Promise<Measured> {
  const name = citus ? "Citus" : "one server";
  const say = (line: string) => log(`${name}: ${line}`);
  const pool = new pg.Pool({ connectionString: database.sqlUrl, max: CONCURRENCY });
  pool.on("error", () => {});
  const trips = countRoundTrips(pool);
  const effects = benchEffects(pool, { schema: database.schema });
  // The same library with coalescing off: each claim and completion its own round trip (before).
  const uncoalesced = benchEffects(pool, { schema: database.schema, coalesce: false });
  const nodes = await nodesOf(database, citus);
  try {
    await pool.query(RAW_TABLE);
    if (citus) {
      // The raw baseline distributed like effects: one router INSERT on the tenant's worker.
      await pool.query(
        `SELECT create_distributed_table('${database.schema}.raw_claims', 'tenant_id', colocate_with := '${database.schema}.effects')`,
      );
      const { rows } = await pool.query<{ port: number; tenants: string }>(
        `SELECT s.nodeport AS port, string_agg(t.tenant, ' ' ORDER BY t.tenant) AS tenants
           FROM generate_series(0, $2::int - 1) AS g(i), LATERAL (SELECT 'bench-' || g.i AS tenant) t
           JOIN citus_shards s ON s.shardid = get_shard_id_for_distribution_column($1::regclass, t.tenant)
          GROUP BY s.nodeport ORDER BY s.nodeport`,
        [`${database.schema}.effects`, TENANTS],
      );
      say(`tenants by worker: ${rows.map((r) => `${r.port}: ${r.tenants}`).join("; ")}`);
    }
    let seq = 0;
    const rawFresh = (w: number, i: number) =>
      pool.query({ ...RAW_INSERT, values: [tenantOf(w), `fresh:${seq}-${w}-${i}`, `o${w}`, `m${i}`] });
    const freshWith = (lib: typeof effects, tag: string) => async (w: number, i: number) => {
      const r = await lib.claim({
        tenant: tenantOf(w),
        key: `fresh:${tag}${seq}-${w}-${i}`,
        jobType: "bench",
        messageId: `m${i}`,
      });
      if (r.kind !== "owned") throw new Error(`expected a fresh claim, got ${r.kind}`);
    };
    const libFresh = freshWith(effects, "");
    const offFresh = freshWith(uncoalesced, "off-");

    say("warming up");
    seq = 0;
    await runFor(CONCURRENCY, 1, rawFresh);
    await runFor(CONCURRENCY, 1, libFresh);
    await runFor(CONCURRENCY, 1, offFresh);

    // Runs a phase of fresh library claims, adding the CPU every node's backends and this process
    // used over it to `cpu` (µs by node role).
    const withCpu = async (cpu: Map<string, number>, client: { us: number }, op: (w: number, i: number) => Promise<unknown>) => {
      const before = await sampleNodes(nodes);
      const clientBefore = process.cpuUsage();
      const r = await runFor(CONCURRENCY, SECONDS, op);
      const used = process.cpuUsage(clientBefore);
      client.us += used.user + used.system;
      const after = await sampleNodes(nodes);
      for (const [k, n] of nodes.entries()) {
        const spent = backendCpuBetween(before[k] as Map<number, number>, after[k] as Map<number, number>);
        cpu.set(n.role, (cpu.get(n.role) ?? 0) + spent);
      }
      return r;
    };
    const libCpu = new Map<string, number>();
    const offCpu = new Map<string, number>();
    const clientCpu = { us: 0 };

    // Alternate raw and library twice so drift (autovacuum, checkpoints) hits both.
    const fresh = {
      raw: { ops: 0, s: 0 },
      lib: { ops: 0, s: 0, trips: 0 },
      off: { ops: 0, s: 0, trips: 0 },
      bare: { ops: 0, s: 0 },
      sql: { ops: 0, s: 0 },
    };
    for (let round = 1; round <= 2; round++) {
      seq = round;
      const raw = await runFor(CONCURRENCY, SECONDS, rawFresh);
      fresh.raw.ops += raw.ops;
      fresh.raw.s += raw.ops / raw.perSecond;
      say(`fresh round ${round}: raw ${raw.perSecond.toFixed(0)}/s`);
      const before = trips.count();
      const lib = await withCpu(libCpu, clientCpu, libFresh);
      fresh.lib.ops += lib.ops;
      fresh.lib.s += lib.ops / lib.perSecond;
      fresh.lib.trips += trips.count() - before;
      say(`fresh round ${round}: library ${lib.perSecond.toFixed(0)}/s`);
      const offBefore = trips.count();
      const off = await withCpu(offCpu, { us: 0 }, offFresh);
      fresh.off.ops += off.ops;
      fresh.off.s += off.ops / off.perSecond;
      fresh.off.trips += trips.count() - offBefore;
      say(`fresh round ${round}: library with coalescing off ${off.perSecond.toFixed(0)}/s`);
      const bare = await runFor(CONCURRENCY, SECONDS, (w, i) =>
        pool.query({ ...BARE_EFFECTS_INSERT, values: [`bare-${tenantOf(w)}`, `fresh:${seq}-${w}-${i}`, `o${w}`, `m${i}`] }),
      );
      fresh.bare.ops += bare.ops;
      fresh.bare.s += bare.ops / bare.perSecond;
      say(`fresh round ${round}: bare INSERT into partitioned effects (not a claim) ${bare.perSecond.toFixed(0)}/s`);
      // The library's own claim statement sent straight through the pool: the SQL's share of the
      // cost, without the library's JavaScript (validation, metrics, rollups, result mapping).
      const sqlOnly = await runFor(CONCURRENCY, SECONDS, (w, i) =>
        pool.query({
          name: "bench_onceboard_claim",
          text: CLAIM_FUNCTION_SQL,
          values: [
            `sql-${tenantOf(w)}`,
            `fresh:${seq}-${w}-${i}`,
            "bench",
            "once",
            `bench-sql:${seq}-${w}-${i}`,
            `m${i}`,
            null,
            30_000,
            10_000,
            false,
            false,
          ],
        }),
      );
      fresh.sql.ops += sqlOnly.ops;
      fresh.sql.s += sqlOnly.ops / sqlOnly.perSecond;
      say(
        `fresh round ${round}: onceboard_claim() alone through the pool (no library JavaScript) ${sqlOnly.perSecond.toFixed(0)}/s`,
      );
    }
    const barePerS = fresh.bare.ops / fresh.bare.s;
    const sqlPerS = fresh.sql.ops / fresh.sql.s;
    const rawPerS = fresh.raw.ops / fresh.raw.s;
    const libPerS = fresh.lib.ops / fresh.lib.s;
    const freshTrips = fresh.lib.trips / fresh.lib.ops;
    const offPerS = fresh.off.ops / fresh.off.s;
    say(`fresh: library ${libPerS.toFixed(0)}/s, raw ${rawPerS.toFixed(0)}/s, ${freshTrips.toFixed(3)} round trips per claim`);
    say(
      `fresh, coalescing off: ${offPerS.toFixed(0)}/s, ${(fresh.off.trips / fresh.off.ops).toFixed(3)} round trips per claim; coalesced/off ${(libPerS / offPerS).toFixed(3)}`,
    );
    const perClaim = (cpu: Map<string, number>, ops: number) =>
      nodes.length === 0 ? null : new Map([...cpu].map(([role, us]) => [role, us / 1000 / ops]));
    const cpuPerClaim = perClaim(libCpu, fresh.lib.ops);
    const cpuPerUncoalescedClaim = perClaim(offCpu, fresh.off.ops);
    const clientCpuPerClaim = clientCpu.us / 1000 / fresh.lib.ops;
    const show = (m: Map<string, number> | null) =>
      m ? [...m].map(([role, ms]) => `${role} ${ms.toFixed(3)} ms`).join(", ") : "not read (server not on this machine)";
    say(`database CPU per fresh claim: coalesced ${show(cpuPerClaim)}; coalescing off ${show(cpuPerUncoalescedClaim)}`);
    say(`this process's CPU per coalesced fresh claim: ${clientCpuPerClaim.toFixed(3)} ms`);

    // One call in flight: nothing to coalesce, so coalescing must cost a lone call nothing.
    // Alternating blocks of LONE_CALLS claims, coalescing on and off; p50 and p99 of each.
    const lone = { on: [] as number[], off: [] as number[] };
    for (let i = 0; i < LONE_CALLS * 4; i++) {
      // Alternated call by call (the order swapped each time), so drift hits both alike.
      const order = i % 2 === 0 ? (["on", "off"] as const) : (["off", "on"] as const);
      for (const which of order) {
        const lib = which === "on" ? effects : uncoalesced;
        const started = performance.now();
        await lib.claim({ tenant: tenantOf(i), key: `lone:${which}-${i}`, jobType: "bench" });
        lone[which].push(performance.now() - started);
      }
    }
    const pct = (xs: number[], p: number) => {
      const sorted = [...xs].sort((a, b) => a - b);
      return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
    };
    const lonePct = { p50: pct(lone.on, 50), p99: pct(lone.on, 99), p50Off: pct(lone.off, 50), p99Off: pct(lone.off, 99) };
    say(
      `one call in flight: coalescing on p50 ${lonePct.p50.toFixed(3)} ms p99 ${lonePct.p99.toFixed(3)} ms; off p50 ${lonePct.p50Off.toFixed(3)} ms p99 ${lonePct.p99Off.toFixed(3)} ms`,
    );
    say(
      `context: a bare INSERT into the partitioned effects table runs at ${barePerS.toFixed(0)}/s = ${(barePerS / rawPerS).toFixed(3)} of raw; the library claim is ${(libPerS / barePerS).toFixed(3)} of that`,
    );
    say(
      `context: onceboard_claim() alone through the pool runs at ${sqlPerS.toFixed(0)}/s = ${(sqlPerS / rawPerS).toFixed(3)} of raw; the library's JavaScript keeps ${(libPerS / sqlPerS).toFixed(3)} of that`,
    );

    // Batched claims: effects.claimMany of BATCH fresh keys per call (one tenant per call), fewer
    // callers so the pool's connections are not all holding a batch's locks at once. Alternated
    // with raw single inserts.
    const batch = { raw: { ops: 0, s: 0 }, lib: { ops: 0, s: 0, trips: 0, calls: 0 } };
    const batchConcurrency = Math.max(1, Math.floor(CONCURRENCY / 4));
    for (let round = 1; round <= 2; round++) {
      seq = 20 + round;
      const raw = await runFor(CONCURRENCY, SECONDS, rawFresh);
      batch.raw.ops += raw.ops;
      batch.raw.s += raw.ops / raw.perSecond;
      const before = trips.count();
      const lib = await runFor(batchConcurrency, SECONDS, async (w, i) => {
        const answers = await effects.claimMany(
          Array.from({ length: BATCH }, (_, k) => ({
            tenant: tenantOf(w + i),
            key: `batch:${seq}-${w}-${i}-${k}`,
            jobType: "bench",
          })),
        );
        if (answers.some((a) => a.kind !== "owned")) throw new Error("expected fresh claims in the batch");
      });
      batch.lib.ops += lib.ops * BATCH;
      batch.lib.s += lib.ops / lib.perSecond;
      batch.lib.calls += lib.ops;
      batch.lib.trips += trips.count() - before;
      say(
        `batch round ${round}: raw single inserts ${raw.perSecond.toFixed(0)}/s, batched claims ${(lib.perSecond * BATCH).toFixed(0)}/s (${BATCH} per call, ${batchConcurrency} callers)`,
      );
    }
    const batchPerS = batch.lib.ops / batch.lib.s;
    const batchRawPerS = batch.raw.ops / batch.raw.s;
    const tripsPerBatch = batch.lib.trips / batch.lib.calls;
    say(
      `batched: ${batchPerS.toFixed(0)} claims/s vs raw ${batchRawPerS.toFixed(0)} single inserts/s, ${tripsPerBatch.toFixed(3)} round trips per batch`,
    );

    // once(): claim + step + completion, coalescing on and off alternated, for reference.
    const onceRate = { on: { ops: 0, s: 0, trips: 0 }, off: { ops: 0, s: 0, trips: 0 } };
    for (let round = 1; round <= 2; round++) {
      for (const [which, lib] of [
        ["on", effects],
        ["off", uncoalesced],
      ] as const) {
        const before = trips.count();
        const r = await runFor(CONCURRENCY, SECONDS, (w, i) =>
          lib.once({ tenant: tenantOf(w), key: `once:${which}${round}-${w}-${i}`, jobType: "bench", messageId: `m${i}` }, () => ({
            ok: true,
          })),
        );
        onceRate[which].ops += r.ops;
        onceRate[which].s += r.ops / r.perSecond;
        onceRate[which].trips += trips.count() - before;
      }
    }
    const oncePerS = onceRate.on.ops / onceRate.on.s;
    const onceOffPerS = onceRate.off.ops / onceRate.off.s;
    say(
      `once() (claim + completion): coalesced ${oncePerS.toFixed(0)}/s (${(onceRate.on.trips / onceRate.on.ops).toFixed(3)} round trips each), off ${onceOffPerS.toFixed(0)}/s (${(onceRate.off.trips / onceRate.off.ops).toFixed(3)})`,
    );

    // Duplicates: completed keys for the library, existing keys for raw.
    const KEYS = 4000;
    say(`preparing ${KEYS} completed effects for the duplicate phase`);
    const dupTenant = (k: number) => tenantOf(k);
    const dupKey = (w: number, i: number) => (w * 7919 + i) % KEYS;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, w) => {
        for (let k = w; k < KEYS; k += CONCURRENCY) {
          await effects.once({ tenant: dupTenant(k), key: `dup:${k}`, jobType: "bench" }, () => ({ chargeId: `ch_${k}` }));
          await pool.query({ ...RAW_INSERT, values: [dupTenant(k), `dup:${k}`, "o", "m"] });
        }
      }),
    );
    const dup = { raw: { ops: 0, s: 0 }, lib: { ops: 0, s: 0, trips: 0 } };
    for (let round = 1; round <= 2; round++) {
      const raw = await runFor(CONCURRENCY, SECONDS, async (w, i) => {
        const k = dupKey(w, i);
        const r = await pool.query({ ...RAW_INSERT, values: [dupTenant(k), `dup:${k}`, "o", "m"] });
        if (r.rowCount !== 0) throw new Error("raw duplicate inserted");
      });
      dup.raw.ops += raw.ops;
      dup.raw.s += raw.ops / raw.perSecond;
      say(`duplicate round ${round}: raw ${raw.perSecond.toFixed(0)}/s`);
      const before = trips.count();
      const lib = await runFor(CONCURRENCY, SECONDS, async (w, i) => {
        const k = dupKey(w, i);
        const r = await effects.once({ tenant: dupTenant(k), key: `dup:${k}`, jobType: "bench", attempt: 2 }, () => {
          throw new Error("a duplicate ran");
        });
        if (!r.duplicate) throw new Error("expected a duplicate");
      });
      dup.lib.ops += lib.ops;
      dup.lib.s += lib.ops / lib.perSecond;
      dup.lib.trips += trips.count() - before;
      say(`duplicate round ${round}: library ${lib.perSecond.toFixed(0)}/s`);
    }
    const dupRaw = dup.raw.ops / dup.raw.s;
    const dupLib = dup.lib.ops / dup.lib.s;
    const dupTrips = dup.lib.trips / dup.lib.ops;
    say(
      `duplicates: library ${dupLib.toFixed(0)}/s, raw ${dupRaw.toFixed(0)}/s, ${dupTrips.toFixed(3)} round trips per duplicate`,
    );
    say(`PostgreSQL ${database.serverVersion} (${database.where})`);
    return {
      libPerS,
      rawPerS,
      offPerS,
      batchPerS,
      batchRawPerS,
      tripsPerBatch,
      roundTrips: (fresh.lib.trips + dup.lib.trips) / (fresh.lib.ops + dup.lib.ops),
      dupLib,
      dupRaw,
      oncePerS,
      onceOffPerS,
      lone: lonePct,
      cpuPerClaim,
      cpuPerUncoalescedClaim,
      clientCpuPerClaim,
      serverVersion: database.serverVersion,
    };
  } finally {
    await effects.close();
    await uncoalesced.close();
    await pool.end().catch(() => {});
    for (const n of nodes) await n.close().catch(() => {});
  }
}

/** `key=value` pairs of one target's CPU per claim: the server, or the coordinator and the workers together. */
function cpuPairs(prefix: string, m: Measured): string[] {
  const pairs: string[] = [`${prefix}client_cpu_ms_per_claim=${m.clientCpuPerClaim.toFixed(3)}`];
  const add = (label: string, cpu: Map<string, number> | null) => {
    if (!cpu) return;
    let workers = 0;
    for (const [role, ms] of cpu) {
      if (role.startsWith("worker")) workers += ms;
      else pairs.push(`${prefix}${role}_cpu_ms_per${label}=${ms.toFixed(3)}`);
    }
    if ([...cpu.keys()].some((r) => r.startsWith("worker")))
      pairs.push(`${prefix}workers_cpu_ms_per${label}=${workers.toFixed(3)}`);
  };
  add("_claim", m.cpuPerClaim);
  add("_uncoalesced_claim", m.cpuPerUncoalescedClaim);
  return pairs;
}

async function main() {
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
  log(`machine: ${machine()}; load average ${load}; concurrency ${CONCURRENCY}, ${SECONDS}s per phase`);
  const citusUrl = process.env.CITUS_URL?.trim() || null;
  const mariadbUrl =
    process.env.MARIADB_URL?.trim() || (process.argv.includes("--mariadb") ? "mysql://root@127.0.0.1:3306" : null);
  const database = await benchDatabase(log);
  let plain: Measured;
  try {
    plain = await measure(database, false);
  } finally {
    await database.close();
  }
  let citus: Measured | null = null;
  if (citusUrl) {
    const coordinator = await citusBenchDatabase(citusUrl, log);
    try {
      citus = await measure(coordinator, true);
    } finally {
      await coordinator.close();
    }
  }
  const mariadb = mariadbUrl ? await measureMysql(mariadbUrl, log) : null;
  const m = plain;
  const pairs = [
    `ratio=${(m.libPerS / m.rawPerS).toFixed(3)}`,
    `duplicate_ratio=${(m.dupLib / m.dupRaw).toFixed(3)}`,
    `batch_ratio=${(m.batchPerS / m.batchRawPerS).toFixed(3)}`,
    `round_trips_per_claim=${m.roundTrips.toFixed(3)}`,
    `round_trips_per_batch=${m.tripsPerBatch.toFixed(3)}`,
    `library_per_s=${m.libPerS.toFixed(0)}`,
    `raw_per_s=${m.rawPerS.toFixed(0)}`,
    `batch_per_s=${m.batchPerS.toFixed(0)}`,
    `duplicate_per_s=${m.dupLib.toFixed(0)}`,
    `raw_duplicate_per_s=${m.dupRaw.toFixed(0)}`,
    `uncoalesced_per_s=${m.offPerS.toFixed(0)}`,
    `once_per_s=${m.oncePerS.toFixed(0)}`,
    `once_uncoalesced_per_s=${m.onceOffPerS.toFixed(0)}`,
    `lone_p50_ms=${m.lone.p50.toFixed(3)}`,
    `lone_p99_ms=${m.lone.p99.toFixed(3)}`,
    `lone_p50_off_ms=${m.lone.p50Off.toFixed(3)}`,
    `lone_p99_off_ms=${m.lone.p99Off.toFixed(3)}`,
    ...cpuPairs("", m),
  ];
  if (citus) {
    const c = citus;
    pairs.push(
      // Against the distributed raw insert (citus_ratio), and against one server's library (_vs_one_server).
      `citus_ratio=${(c.libPerS / c.rawPerS).toFixed(3)}`,
      `citus_duplicate_ratio=${(c.dupLib / c.dupRaw).toFixed(3)}`,
      `citus_batch_ratio=${(c.batchPerS / c.batchRawPerS).toFixed(3)}`,
      `citus_vs_one_server=${(c.libPerS / m.libPerS).toFixed(3)}`,
      `citus_uncoalesced_vs_one_server=${(c.offPerS / m.offPerS).toFixed(3)}`,
      `citus_duplicate_vs_one_server=${(c.dupLib / m.dupLib).toFixed(3)}`,
      `citus_batch_vs_one_server=${(c.batchPerS / m.batchPerS).toFixed(3)}`,
      `citus_round_trips_per_claim=${c.roundTrips.toFixed(3)}`,
      `citus_round_trips_per_batch=${c.tripsPerBatch.toFixed(3)}`,
      `citus_library_per_s=${c.libPerS.toFixed(0)}`,
      `citus_raw_per_s=${c.rawPerS.toFixed(0)}`,
      `citus_batch_per_s=${c.batchPerS.toFixed(0)}`,
      `citus_duplicate_per_s=${c.dupLib.toFixed(0)}`,
      `citus_raw_duplicate_per_s=${c.dupRaw.toFixed(0)}`,
      `citus_uncoalesced_per_s=${c.offPerS.toFixed(0)}`,
      `citus_once_per_s=${c.oncePerS.toFixed(0)}`,
      `citus_once_uncoalesced_per_s=${c.onceOffPerS.toFixed(0)}`,
      `citus_lone_p50_ms=${c.lone.p50.toFixed(3)}`,
      `citus_lone_p50_off_ms=${c.lone.p50Off.toFixed(3)}`,
      ...cpuPairs("citus_", c),
    );
  }
  if (mariadb) pairs.push(...mysqlPairs(mariadb), `mariadb_vs_postgres=${(mariadb.libPerS / m.libPerS).toFixed(3)}`);
  console.log(`claims ${pairs.join(" ")}`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
