/**
 * `npm run bench:citus-move`: what moving a tenant's shard to another worker costs the claims of
 * that tenant, in Citus's default mode (`auto`: logical replication, writes go on while the shard
 * is copied) and in `block_writes` (writes to the moved shards wait for the copy), alternated.
 * A scratch schema on the coordinator (CITUS_URL) as `npm run db:migrate -- --citus` sets it up;
 * BENCH_MOVE_ROWS completed effects of one tenant, then BENCH_MOVE_CALLERS callers claiming fresh
 * keys of that tenant (effects.once, coalescing off) before, during and after each move.
 * Per mode: how long the move took, claims per second during it against before it, and the
 * slowest claim during it. Every key claimed is checked to have run once.
 * Last line: `citus_move auto_move_ms=… auto_during_per_s=… auto_before_per_s=… auto_max_claim_ms=…
 * block_writes_move_ms=… …` (the medians of BENCH_MOVE_ROUNDS moves per mode).
 * Env: CITUS_URL (required), BENCH_MOVE_ROWS (50000), BENCH_MOVE_CALLERS (8), BENCH_MOVE_ROUNDS (2).
 */
import os from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { benchNumber } from "./env";
import { benchEffects, citusBenchDatabase, machine, percentile } from "./support";

const ROWS = benchNumber("BENCH_MOVE_ROWS", 50_000, { integer: true });
const CALLERS = benchNumber("BENCH_MOVE_CALLERS", 8, { integer: true });
const ROUNDS = benchNumber("BENCH_MOVE_ROUNDS", 2, { integer: true });
const TENANT = "move-bench";
/** Claims measured before each move, to compare the rate during it with. */
const BEFORE_MS = 3000;
const MODES = ["auto", "block_writes"] as const;
const log = (line: string) => console.log(`[bench:citus-move] ${line}`);

interface Timed {
  at: number;
  ms: number;
}

async function main() {
  const url = process.env.CITUS_URL?.trim();
  if (!url) {
    process.stderr.write("bench:citus-move: set CITUS_URL to a Citus coordinator with registered workers\n");
    process.exit(2);
  }
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
  log(`machine: ${machine()}; load average ${load}; ${ROWS} rows in the moved shard's tenant, ${CALLERS} callers`);
  const database = await citusBenchDatabase(url, log);
  const pool = new pg.Pool({ connectionString: database.sqlUrl, max: CALLERS + 2 });
  pool.on("error", () => {});
  const effects = benchEffects(pool, { schema: database.schema, coalesce: false, wait: "120s" });
  try {
    await pool.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, first_message_id, last_message_id, outcome,
                            created_at, updated_at, completed_at)
       SELECT $1, 'capture:filled-' || i, 'bench', 'completed', 'once', 1, 'm' || i, 'm' || i, '{"ok":true}', t, t, t
         FROM generate_series(1, $2::int) i, LATERAL (SELECT date_trunc('milliseconds', now()) - (i % 3600) * interval '1 second' AS t) x`,
      [TENANT, ROWS],
    );
    const { rows: shard } = await pool.query<{ shardid: string; bytes: string }>(
      `SELECT s.shardid, (SELECT sum(c.shard_size) FROM citus_shards c JOIN pg_dist_shard d ON d.shardid = c.shardid
                           JOIN pg_dist_placement p ON p.shardid = d.shardid
                          WHERE c.colocation_id = s.colocation_id AND d.shardminvalue = ds.shardminvalue)::text AS bytes
         FROM citus_shards s JOIN pg_dist_shard ds ON ds.shardid = s.shardid
        WHERE s.shardid = get_shard_id_for_distribution_column($1::regclass, $2::text)`,
      [`${database.schema}.effects`, TENANT],
    );
    const shardId = shard[0]?.shardid;
    log(
      `shard ${shardId}: its co-location group holds ${(Number(shard[0]?.bytes) / 1e6).toFixed(1)} MB across the tables moved with it`,
    );

    const runs = new Map<string, number>();
    const timings: Timed[] = [];
    let loading = true;
    let seq = 0;
    const callers = Array.from({ length: CALLERS }, async (_, w) => {
      for (let i = 0; loading; i++) {
        const key = `capture:move-${w}-${i}`;
        const started = performance.now();
        await effects.once({ tenant: TENANT, key, jobType: "bench" }, () => {
          runs.set(key, (runs.get(key) ?? 0) + 1);
          seq++;
          return key;
        });
        timings.push({ at: performance.now(), ms: performance.now() - started });
      }
    });

    const results = new Map<string, { moveMs: number[]; duringPerS: number[]; beforePerS: number[]; maxClaimMs: number[] }>();
    for (let round = 1; round <= ROUNDS; round++) {
      for (const mode of MODES) {
        const { rows } = await pool.query<{ port: number }>(
          "SELECT nodeport AS port FROM citus_shards WHERE shardid = $1::bigint",
          [shardId],
        );
        const from = Number(rows[0]?.port);
        const { rows: to } = await pool.query<{ port: number }>(
          "SELECT nodeport AS port FROM pg_dist_node WHERE groupid <> 0 AND noderole = 'primary' AND nodeport <> $1::int ORDER BY nodeport LIMIT 1",
          [from],
        );
        const target = Number(to[0]?.port);
        await sleep(BEFORE_MS);
        const moveStart = performance.now();
        const before = timings.filter((t) => t.at >= moveStart - BEFORE_MS).length / (BEFORE_MS / 1000);
        await pool.query(
          "SELECT citus_move_shard_placement($1::bigint, '127.0.0.1', $2::int, '127.0.0.1', $3::int, shard_transfer_mode := $4::citus.shard_transfer_mode)",
          [shardId, from, target, mode],
        );
        const moveEnd = performance.now();
        // A claim that started during the move and ended after it counts: it waited for the move.
        await sleep(500);
        const during = timings.filter((t) => t.at >= moveStart && t.at - t.ms <= moveEnd);
        const moveMs = moveEnd - moveStart;
        const ended = during.filter((t) => t.at <= moveEnd).length;
        const maxClaimMs = Math.max(0, ...during.map((t) => t.ms));
        const entry = results.get(mode) ?? { moveMs: [], duringPerS: [], beforePerS: [], maxClaimMs: [] };
        entry.moveMs.push(moveMs);
        entry.duringPerS.push(ended / (moveMs / 1000));
        entry.beforePerS.push(before);
        entry.maxClaimMs.push(maxClaimMs);
        results.set(mode, entry);
        log(
          `round ${round}, ${mode}: ${from} → ${target} in ${moveMs.toFixed(0)} ms; claims ${before.toFixed(0)}/s before, ${(ended / (moveMs / 1000)).toFixed(0)}/s during, slowest during ${maxClaimMs.toFixed(0)} ms`,
        );
      }
    }
    loading = false;
    await Promise.all(callers);
    const twice = [...runs.values()].filter((n) => n !== 1).length;
    log(`${runs.size} keys claimed, ${seq} step runs, ${twice} keys whose step ran other than once`);
    if (twice > 0) throw new Error(`${twice} keys ran other than once`);
    const median = (xs: number[]) => percentile(xs, 50);
    const pairs = MODES.flatMap((mode) => {
      const r = results.get(mode);
      if (!r) return [];
      return [
        `${mode}_move_ms=${median(r.moveMs).toFixed(0)}`,
        `${mode}_before_per_s=${median(r.beforePerS).toFixed(0)}`,
        `${mode}_during_per_s=${median(r.duringPerS).toFixed(0)}`,
        `${mode}_max_claim_ms=${median(r.maxClaimMs).toFixed(0)}`,
      ];
    });
    console.log(`citus_move ${pairs.join(" ")} rows=${ROWS}`);
  } finally {
    await effects.close();
    await pool.end();
    await database.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
