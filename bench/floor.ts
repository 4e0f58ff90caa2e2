/**
 * npm run bench:floor — how fast fresh `once` calls could go at all on this machine, beside how
 * fast they go and how fast raw inserts go, in one run.
 *
 * 1. Waves alone: for each wave size (1, 2, 4, … up to BENCH_CONCURRENCY), BENCH_FLOOR_WAVES waves
 *    one after another, nothing else in flight: a wave of 1 is `effects.once` (the lone call's own
 *    statements), a larger one `effects.onceMany` (one claim statement and one completion
 *    statement for the whole wave, the statements coalescing sends). Median latency per wave and
 *    CPU per call (this process and the PostgreSQL server, from /proc).
 * 2. The ceiling (bench/ceiling.ts): with BENCH_CONCURRENCY callers, no schedule of waves beats the
 *    best split of the callers over those wave sizes, each caller waiting at least its wave's two
 *    statements and the calls together using at most every core.
 * 3. BENCH_CONCURRENCY in flight, BENCH_ROUNDS alternating rounds of BENCH_SECONDS: raw
 *    `INSERT … ON CONFLICT DO NOTHING` and fresh `once`, each with how busy the machine was.
 *
 * Last line: `floor once_ceiling_per_s=… ceiling_ratio=… once_per_s=… raw_per_s=… once_ratio=…
 * once_busy=… raw_busy=…` (ceiling_ratio: the ceiling over raw; the busy shares are of all cores).
 * Env: DATABASE_URL (else an embedded PostgreSQL), BENCH_CONCURRENCY (16), BENCH_SECONDS (2),
 * BENCH_ROUNDS (3), BENCH_FLOOR_WAVES (300 per wave size).
 */
import os from "node:os";
import pg from "pg";
import { onceCeiling, type WaveCost } from "./ceiling";
import { cpuMark, cpuSince, isLocalServer } from "./cpu";
import { benchNumber } from "./env";
import { RAW_INSERT, RAW_TABLE } from "./raw-insert";
import { benchDatabase, benchEffects, machine, percentile, runFor } from "./support";

const CONCURRENCY = benchNumber("BENCH_CONCURRENCY", 16, { integer: true });
const SECONDS = benchNumber("BENCH_SECONDS", 2);
const ROUNDS = benchNumber("BENCH_ROUNDS", 3, { integer: true });
const WAVES = benchNumber("BENCH_FLOOR_WAVES", 300, { integer: true });
const log = (line: string) => console.log(`[bench:floor] ${line}`);

const asPercent = (share: number | null) => (share === null ? "n/a" : `${(share * 100).toFixed(0)}%`);

async function main() {
  const cores = os.availableParallelism();
  log(`machine: ${machine()}; ${CONCURRENCY} in flight, ${ROUNDS} rounds of ${SECONDS}s, ${WAVES} waves per size`);
  const database = await benchDatabase(log);
  const local = isLocalServer(database.url);
  const pool = new pg.Pool({ connectionString: database.sqlUrl, max: CONCURRENCY });
  pool.on("error", () => {});
  const effects = benchEffects(pool);
  let seq = 0;
  const input = (key: string) => ({ tenant: "bench", key, jobType: "bench", messageId: `m-${key}` });
  const onceFresh = async (tag: string) => {
    const key = `charge:${tag}-${seq++}`;
    const r = await effects.once(input(key), () => ({ charged: key }));
    if (r.result !== "ran") throw new Error(`a fresh key was answered ${r.result}`);
  };
  const rawFresh = async (tag: string) => {
    const key = `charge:${tag}-${seq++}`;
    const r = await pool.query({ ...RAW_INSERT, values: ["bench", key, "o", `m-${key}`] });
    if (r.rowCount !== 1) throw new Error("a fresh raw key conflicted");
  };
  try {
    await pool.query(RAW_TABLE);
    log("warming up");
    await runFor(CONCURRENCY, 1, () => rawFresh("warm"));
    await runFor(CONCURRENCY, 1, () => onceFresh("warm"));

    const sizes = [1, 2, 4, 8, 16, 32, 64, 128, 256].filter((s) => s < CONCURRENCY).concat(CONCURRENCY);
    const waves: WaveCost[] = [];
    for (const size of sizes) {
      const latencies: number[] = [];
      const mark = cpuMark(local);
      for (let w = 0; w < WAVES; w++) {
        const started = performance.now();
        if (size === 1) {
          await onceFresh("lone");
        } else {
          const keys = Array.from({ length: size }, () => `charge:wave-${seq++}`);
          const answers = await effects.onceMany(
            keys.map((key) => input(key)),
            (_claim, i) => ({ charged: keys[i] }),
          );
          if (!answers.every((a) => a.ok && a.result.result === "ran"))
            throw new Error(`a wave of ${size} fresh keys did not all run`);
        }
        latencies.push(performance.now() - started);
      }
      const spent = cpuSince(mark);
      const calls = size * WAVES;
      const cost: WaveCost = {
        size,
        latencyMs: percentile(latencies, 50),
        cpuUsPerKey: spent.postgresUs === null ? null : (spent.processUs + spent.postgresUs) / calls,
      };
      waves.push(cost);
      log(
        `wave of ${size} alone: claim + completion ${cost.latencyMs.toFixed(3)} ms (median); CPU per call ${(spent.processUs / calls).toFixed(0)} µs here + ${spent.postgresUs === null ? "n/a" : (spent.postgresUs / calls).toFixed(0)} µs PostgreSQL; alone it allows ${((CONCURRENCY * 1000) / cost.latencyMs).toFixed(0)}/s by latency${cost.cpuUsPerKey ? ` and ${((cores * 1e6) / cost.cpuUsPerKey).toFixed(0)}/s by CPU` : ""}`,
      );
    }
    const ceiling = onceCeiling(waves, CONCURRENCY, cores);
    log(
      `ceiling: ${ceiling.perSecond.toFixed(0)} fresh once/s at ${CONCURRENCY} in flight (${ceiling.split.map((s) => `${s.callers.toFixed(1)} callers in waves of ${s.size}`).join(" + ")}; limited by ${ceiling.limitedBy})`,
    );

    const measured = { raw: { ops: 0, s: 0, busy: [] as number[] }, once: { ops: 0, s: 0, busy: [] as number[] } };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [name, op] of [
        ["raw", rawFresh],
        ["once", onceFresh],
      ] as const) {
        const mark = cpuMark(local);
        const r = await runFor(CONCURRENCY, SECONDS, () => op(name));
        const spent = cpuSince(mark);
        measured[name].ops += r.ops;
        measured[name].s += r.ops / r.perSecond;
        if (spent.machineBusy !== null) measured[name].busy.push(spent.machineBusy);
        // This process's share of one core: Node runs JavaScript on one thread, so near 100 % it is the limit.
        const nodeShare = spent.processUs / ((r.ops / r.perSecond) * 1e6);
        log(
          `round ${round}: ${name} ${r.perSecond.toFixed(0)}/s, machine ${asPercent(spent.machineBusy)} busy, this process ${asPercent(nodeShare)} of a core`,
        );
      }
    }
    const rawPerS = measured.raw.ops / measured.raw.s;
    const oncePerS = measured.once.ops / measured.once.s;
    const busy = (b: number[]) => (b.length > 0 ? percentile(b, 50) : null);
    log(
      `fresh once runs at ${((oncePerS / ceiling.perSecond) * 100).toFixed(0)}% of its ceiling; the ceiling is ${(ceiling.perSecond / rawPerS).toFixed(3)} of raw`,
    );
    console.log(
      `floor once_ceiling_per_s=${ceiling.perSecond.toFixed(0)} ceiling_ratio=${(ceiling.perSecond / rawPerS).toFixed(3)} once_per_s=${oncePerS.toFixed(0)} raw_per_s=${rawPerS.toFixed(0)} once_ratio=${(oncePerS / rawPerS).toFixed(3)} once_busy=${busy(measured.once.busy)?.toFixed(2) ?? "n/a"} raw_busy=${busy(measured.raw.busy)?.toFixed(2) ?? "n/a"}`,
    );
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
