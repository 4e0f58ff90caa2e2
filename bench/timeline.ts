import { setTimeout as sleep } from "node:timers/promises";
/**
 * npm run bench:timeline — what the delivery timeline costs the claim paths, as an A/B inside one
 * process: bench:claims' three paths (fresh claims, duplicates, batched claims of BENCH_BATCH) and
 * bench:e2e's pg-boss job rate (its default `job` handler and its `once` handler, whose batches go
 * through claimMany), each measured with two createEffects() instances on one pool: "off"
 * (`timeline: false`, the library as it was before the timeline) and "on" (the default).
 *
 * Why one process, alternating: on a shared machine two runs minutes apart differ by more than the
 * 5 % this is about; rounds that alternate off/on (ABBA, so neither side always goes first) inside
 * one run see the same load. Each round's time includes that instance's flush() after it (the
 * timeline rows, and the duplicate bookkeeping and rollups both sides have), so work deferred by
 * one side is never paid in the other side's round.
 *
 * Last line: `timeline fresh=<on/off> duplicate=<on/off> batch=<on/off> e2e_job=<on/off>
 * e2e_once=<on/off> rounds=<n>`; 1.000 = no cost, 0.95 = 5 % slower with the timeline.
 * Env: BENCH_SECONDS (0.25 per claims round: short rounds, many of them, follow the load closely), BENCH_ROUNDS (40
 * per claims path), BENCH_E2E_ROUNDS (10 per e2e handler), BENCH_CONCURRENCY (16),
 * BENCH_BATCH (50), BENCH_E2E_JOBS (2000 per e2e phase), BENCH_E2E_BATCH (100), DATABASE_URL
 * (else an embedded PostgreSQL).
 */
import pg from "pg";
import type PgBoss from "pg-boss";
import type { IdempotentHandler } from "../lib/queues/deliveries";
import { startBoss, workIdempotent } from "../lib/queues/pgboss";
import { benchNumber } from "./env";
import { benchDatabase, benchEffects, machine, runFor } from "./support";

const SECONDS = benchNumber("BENCH_SECONDS", 0.25);
const ROUNDS = benchNumber("BENCH_ROUNDS", 40, { integer: true });
const E2E_ROUNDS = benchNumber("BENCH_E2E_ROUNDS", 10, { integer: true });
const CONCURRENCY = benchNumber("BENCH_CONCURRENCY", 16, { integer: true });
const BATCH = benchNumber("BENCH_BATCH", 50, { integer: true });
const E2E_JOBS = benchNumber("BENCH_E2E_JOBS", 2000, { integer: true });
const E2E_BATCH = benchNumber("BENCH_E2E_BATCH", 100, { integer: true });
const E2E_POLLERS = 4;
const log = (line: string) => console.log(`[bench:timeline] ${line}`);

type Side = "off" | "on";
/** ABBA…: round r runs off first when r is even, on first when odd. */
const orderOf = (round: number): Side[] => (round % 2 === 0 ? ["off", "on"] : ["on", "off"]);

interface Tally {
  ops: number;
  s: number;
}

/**
 * Runs `measure` for each side in alternating order, ROUNDS times; a side's time is its
 * measurement plus its flush. Returns on/off of operations per second over all rounds.
 */
async function alternate(
  name: string,
  effects: Record<Side, { flush(): Promise<boolean> }>,
  measure: (side: Side, round: number) => Promise<{ ops: number; seconds: number }>,
  rounds = ROUNDS,
): Promise<number> {
  const totals: Record<Side, Tally> = { off: { ops: 0, s: 0 }, on: { ops: 0, s: 0 } };
  const roundRatios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const line: string[] = [];
    const rate: Partial<Record<Side, number>> = {};
    for (const side of orderOf(round)) {
      const { ops, seconds } = await measure(side, round);
      const flushStarted = performance.now();
      if (!(await effects[side].flush())) throw new Error(`${name}: the ${side} side's flush failed`);
      const total = seconds + (performance.now() - flushStarted) / 1000;
      totals[side].ops += ops;
      totals[side].s += total;
      line.push(`${side} ${(ops / total).toFixed(0)}/s`);
      rate[side] = ops / total;
    }
    roundRatios.push((rate.on as number) / (rate.off as number));
    if (rounds <= 10 || (round + 1) % 10 === 0) log(`${name} round ${round + 1}/${rounds}: ${line.join(", ")}`);
  }
  const on = totals.on.ops / totals.on.s;
  const off = totals.off.ops / totals.off.s;
  const sorted = [...roundRatios].sort((a, b) => a - b);
  const median =
    ((sorted[Math.floor((sorted.length - 1) / 2)] as number) + (sorted[Math.ceil((sorted.length - 1) / 2)] as number)) / 2;
  log(
    `${name}: on ${on.toFixed(0)}/s, off ${off.toFixed(0)}/s, on/off ${(on / off).toFixed(3)} (median of the ${rounds} rounds' on/off ${median.toFixed(3)})`,
  );
  return on / off;
}

async function main() {
  log(`machine: ${machine()}; ${ROUNDS} rounds per path, concurrency ${CONCURRENCY}, ${SECONDS}s per claims phase`);
  const database = await benchDatabase(log);
  const pool = new pg.Pool({ connectionString: database.sqlUrl, max: Math.max(CONCURRENCY, 40) });
  pool.on("error", () => {});
  const make = (timeline: boolean) =>
    benchEffects(pool, {
      timeline,
      workerId: `bench-timeline-${timeline ? "on" : "off"}`,
    });
  const effects: Record<Side, ReturnType<typeof make>> = { off: make(false), on: make(true) };
  let boss: PgBoss | null = null;
  try {
    const timed = async (concurrency: number, op: (w: number, i: number) => Promise<unknown>, perOp = 1) => {
      const r = await runFor(concurrency, SECONDS, op);
      return { ops: r.ops * perOp, seconds: r.ops / r.perSecond };
    };

    log("warming up");
    for (const side of ["off", "on"] as const) {
      await runFor(CONCURRENCY, 1, (w, i) =>
        effects[side].claim({ tenant: "bench", key: `warm:${side}-${w}-${i}`, jobType: "bench" }),
      );
    }

    const fresh = await alternate("fresh claims", effects, (side, round) =>
      timed(CONCURRENCY, async (w, i) => {
        const r = await effects[side].claim({
          tenant: "bench",
          key: `fresh:${side}-${round}-${w}-${i}`,
          jobType: "bench",
          messageId: `m${i}`,
        });
        if (r.kind !== "owned") throw new Error(`expected a fresh claim, got ${r.kind}`);
      }),
    );

    const batchCallers = Math.max(1, Math.floor(CONCURRENCY / 4));
    const batch = await alternate("batched claims", effects, (side, round) =>
      timed(
        batchCallers,
        async (w, i) => {
          const answers = await effects[side].claimMany(
            Array.from({ length: BATCH }, (_, k) => ({
              tenant: "bench",
              key: `batch:${side}-${round}-${w}-${i}-${k}`,
              jobType: "bench",
            })),
          );
          if (answers.some((a) => a.kind !== "owned")) throw new Error("expected fresh claims in the batch");
        },
        BATCH,
      ),
    );

    // Duplicates: each side replays its own completed keys (one effects row is not shared, so
    // neither side's duplicate bookkeeping updates the other's rows).
    const KEYS = 2000;
    log(`preparing ${KEYS} completed effects per side for the duplicate path`);
    for (const side of ["off", "on"] as const) {
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async (_, w) => {
          for (let k = w; k < KEYS; k += CONCURRENCY) {
            await effects[side].once({ tenant: "bench", key: `dup:${side}:${k}`, jobType: "bench" }, () => ({ k }));
          }
        }),
      );
      await effects[side].flush();
    }
    const duplicate = await alternate("duplicates", effects, (side) =>
      timed(CONCURRENCY, async (w, i) => {
        const r = await effects[side].once(
          { tenant: "bench", key: `dup:${side}:${(w * 7919 + i) % KEYS}`, jobType: "bench", attempt: 2 },
          () => {
            throw new Error("a duplicate ran");
          },
        );
        if (!r.duplicate) throw new Error("expected a duplicate");
      }),
    );

    // bench:e2e's workload: pg-boss jobs whose handler does one small write through the library.
    await pool.query(
      "CREATE TABLE e2e_writes (id text PRIMARY KEY, tenant_id text NOT NULL, amount integer NOT NULL, created_at timestamptz NOT NULL DEFAULT now())",
    );
    boss = await startBoss({
      connectionString: database.url,
      max: E2E_POLLERS + 2,
      supervise: false,
      schedule: false,
      onError: (error) => log(`pg-boss: ${error.message}`),
    });
    const write = {
      name: "bench_timeline_write",
      text: "INSERT INTO e2e_writes (id, tenant_id, amount) VALUES ($1, 'bench', 1)",
    };
    const handlers: Record<"job" | "once", IdempotentHandler<{ id: string }, void>> = {
      job: {
        kind: "job",
        tenant: () => "bench",
        run: async (data, job) => {
          await job.transaction(`write:${data.id}`, async (tx) => {
            await tx.query({ ...write, values: [data.id] });
          });
        },
      },
      once: {
        kind: "once",
        tenant: () => "bench",
        key: (data) => `write:${data.id}`,
        run: async (data) => {
          await pool.query({ ...write, values: [data.id] });
        },
      },
    };
    const e2ePhase = async (kind: "job" | "once", side: Side, round: number | "warm") => {
      const queue = `timeline-${kind}-${side}-${round}`;
      const b = boss as PgBoss;
      await b.createQueue(queue);
      for (let i = 0; i < E2E_JOBS; i += 500) {
        const n = Math.min(500, E2E_JOBS - i);
        await b.insert(Array.from({ length: n }, (_, k) => ({ name: queue, data: { id: `${queue}:${i + k}` } })));
      }
      const started = performance.now();
      await workIdempotent<{ id: string }, void>(b, queue, {
        effects: effects[side],
        concurrency: E2E_POLLERS,
        batchSize: E2E_BATCH,
        pollingIntervalSeconds: 0.5,
        deadLetterQueue: false,
        handler: handlers[kind],
      });
      for (;;) {
        const { rows } = await pool.query<{ n: string }>(
          "SELECT count(*) AS n FROM pgboss.job WHERE name = $1 AND state = 'completed'",
          [queue],
        );
        if (Number(rows[0]?.n ?? 0) >= E2E_JOBS) break;
        await sleep(50);
      }
      const seconds = (performance.now() - started) / 1000;
      await b.offWork(queue);
      return { ops: E2E_JOBS, seconds };
    };
    const e2e: Record<"job" | "once", number> = { job: 0, once: 0 };
    for (const kind of ["job", "once"] as const) {
      log(`e2e ${kind} handler: warming up`);
      await e2ePhase(kind, "off", "warm");
      await e2ePhase(kind, "on", "warm");
      e2e[kind] = await alternate(`e2e ${kind} handler jobs`, effects, (side, round) => e2ePhase(kind, side, round), E2E_ROUNDS);
    }

    const { rows } = await pool.query<{ n: string }>("SELECT count(*) AS n FROM delivery_timeline");
    log(`${rows[0]?.n} timeline rows written by the on side; PostgreSQL ${database.serverVersion} (${database.where})`);
    console.log(
      `timeline fresh=${fresh.toFixed(3)} duplicate=${duplicate.toFixed(3)} batch=${batch.toFixed(3)} e2e_job=${e2e.job.toFixed(3)} e2e_once=${e2e.once.toFixed(3)} rounds=${ROUNDS} e2e_rounds=${E2E_ROUNDS}`,
    );
  } finally {
    await boss?.stop({ graceful: false, wait: true }).catch(() => {});
    await Promise.all([effects.off.close(), effects.on.close()]).catch(() => {});
    await pool.end().catch(() => {});
    await database.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
