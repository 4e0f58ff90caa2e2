import { setTimeout as sleep } from "node:timers/promises";
/**
 * npm run bench:e2e — what users decide on: jobs per second through a real pg-boss worker, with
 * and without the worker library wrapping the handler, on the same database in the same run.
 *
 * The handler does one small write (an INSERT of one narrow row). Without the library it runs it
 * on the pool; with the library (lib/queues' workIdempotent, a `job` handler) the write is a
 * transactional step, so claim, write and completion commit together — the pattern the library
 * recommends for database effects. Both sides use the same pg-boss instance, the same number of
 * pollers (BENCH_CONCURRENCY, default 4), the same batch size (BENCH_E2E_BATCH, default 100: pg-boss
 * waits its polling interval between two fetches of a poller, so without batches both sides would
 * measure the interval; a batch's jobs run concurrently) and the same
 * jobs (BENCH_E2E_JOBS per phase, default 4000, inserted before the phase starts). A phase is
 * timed from work() to the moment pg-boss reports every job of its queue completed. Phases
 * alternate without / with / with / without so drift hits both sides equally.
 *
 * BENCH_E2E_HANDLER=once instead wraps the write in a `once` handler (policy external: the write
 * runs on the pool after the claim, and the completion follows it). That is the handler whose
 * fetched batches the adapter claims with effects.claimMany, one claim round trip per batch; a
 * `job` handler's transactional step claims inside its own transaction, one delivery at a time.
 *
 * With the `job` handler a third side runs on pg-boss, the transactional floor: what any handler
 * that keeps the guarantee for a database write must do at the least, written by hand with no
 * library: take a pooled connection, BEGIN, INSERT the claim row (a unique (tenant, key), ON
 * CONFLICT DO NOTHING), the write, COMMIT. Its rate beside the bare pipeline's is the ceiling a
 * transactional step can approach on this machine (four round trips and two rows against one
 * statement); the library's rate is given as a share of it too. Phases then run without / with /
 * floor / floor / with / without.
 *
 * Then the same on RabbitMQ and NATS JetStream (bench/e2e-brokers.ts), in the same run on the same
 * database: raw consumers (write, then ack) against the brokers' adapters, BENCH_E2E_IN_FLIGHT
 * deliveries at once on both sides (default 64), the same alternation. A broker that does not
 * answer at RABBITMQ_URL / NATS_URL is skipped with a line saying so.
 *
 * Lines: `e2e broker=<rabbitmq|nats> ratio=<with/without> with_per_s=<n> without_per_s=<n>` per
 * broker, and last `e2e ratio=<with/without> with_per_s=<n> without_per_s=<n>` (pg-boss), followed
 * for the `job` handler by `floor_per_s=<n> floor_ratio=<floor/without> of_floor=<with/floor>`.
 * Env: BENCH_E2E_JOBS, BENCH_E2E_BATCH, BENCH_CONCURRENCY, BENCH_E2E_HANDLER (job | once, default
 * job), BENCH_E2E_BROKERS (pg-boss only with `none`; default both), BENCH_E2E_IN_FLIGHT,
 * RABBITMQ_URL, NATS_URL, DATABASE_URL (else an embedded PostgreSQL).
 */
import pg from "pg";
import type PgBoss from "pg-boss";
import { loadConfig } from "../lib/config";
import type { IdempotentHandler } from "../lib/queues/deliveries";
import { startBoss, workIdempotent } from "../lib/queues/pgboss";
import { type CpuSpent, cpuMark, cpuSince, isLocalServer } from "./cpu";
import { brokerPhase, type E2eBroker } from "./e2e-brokers";
import { benchChoice, benchNumber } from "./env";
import { benchDatabase, benchEffects, machine } from "./support";

const JOBS = benchNumber("BENCH_E2E_JOBS", 4000, { integer: true });
const CONCURRENCY = benchNumber("BENCH_CONCURRENCY", 4, { integer: true });
const BATCH = benchNumber("BENCH_E2E_BATCH", 100, { integer: true });
const HANDLER = benchChoice("BENCH_E2E_HANDLER", ["job", "once"]);
const IN_FLIGHT = benchNumber("BENCH_E2E_IN_FLIGHT", 64, { integer: true });
const BROKER_CHOICE = benchChoice("BENCH_E2E_BROKERS", ["rabbitmq,nats", "rabbitmq", "nats", "none"]);
const BROKERS = BROKER_CHOICE === "none" ? [] : (BROKER_CHOICE.split(",") as E2eBroker[]);
const log = (line: string) => console.log(`[bench:e2e] ${line}`);

interface WriteJob {
  id: string;
}

const WRITE = {
  name: "bench_e2e_write",
  text: "INSERT INTO e2e_writes (id, tenant_id, amount) VALUES ($1, 'bench', 1)",
};
/** The transactional floor's claim: one row per (tenant, key), uniqueness from the primary key. */
const FLOOR_CLAIM = {
  name: "bench_e2e_floor_claim",
  text: "INSERT INTO e2e_floor_claims (tenant_id, key, owner) VALUES ('bench', $1, 'floor') ON CONFLICT DO NOTHING RETURNING 1",
};

/** One job the way the floor does it: claim and write commit together; a claimed key writes nothing. */
async function floorJob(pool: pg.Pool, id: string): Promise<void> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query("BEGIN ISOLATION LEVEL READ COMMITTED");
    const claimed = await client.query({ ...FLOOR_CLAIM, values: [`write:${id}`] });
    if (claimed.rowCount === 1) await client.query({ ...WRITE, values: [id] });
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    client.release(broken ? true : undefined);
  }
}

async function completed(pool: pg.Pool, queue: string): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    "SELECT count(*) AS n FROM pgboss.job WHERE name = $1 AND state = 'completed'",
    [queue],
  );
  return Number(rows[0]?.n ?? 0);
}

interface PhaseResult {
  perS: number;
  cpu: CpuSpent;
}

/**
 * Inserts the phase's jobs, starts the workers, and times until pg-boss has completed them all;
 * with the CPU the phase used (this process and the local PostgreSQL), which says which side of
 * the socket a gap between two sides is on.
 */
async function phase(
  boss: PgBoss,
  pool: pg.Pool,
  queue: string,
  serverIsLocal: boolean,
  start: () => Promise<unknown>,
): Promise<PhaseResult> {
  await boss.createQueue(queue);
  for (let i = 0; i < JOBS; i += 500) {
    const n = Math.min(500, JOBS - i);
    await boss.insert(Array.from({ length: n }, (_, k) => ({ name: queue, data: { id: `${queue}:${i + k}` } })));
  }
  const started = performance.now();
  const mark = cpuMark(serverIsLocal);
  await start();
  for (;;) {
    if ((await completed(pool, queue)) >= JOBS) break;
    await sleep(50);
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuSince(mark);
  await boss.offWork(queue);
  const failed = await pool.query("SELECT 1 FROM pgboss.job WHERE name = $1 AND state <> 'completed' LIMIT 1", [queue]);
  if (failed.rowCount) throw new Error(`${queue}: a job did not complete`);
  return { perS: JOBS / seconds, cpu };
}

/** µs of CPU per job, or "n/a" (PostgreSQL's when the server is not on this machine). */
function perJob(us: number | null, jobs: number): string {
  return us === null ? "n/a" : (us / jobs).toFixed(0);
}

async function main() {
  log(`machine: ${machine()}; ${CONCURRENCY} pollers, batchSize ${BATCH}, ${JOBS} jobs per phase, ${HANDLER} handler`);
  const database = await benchDatabase(log);
  const pool = new pg.Pool({ connectionString: database.sqlUrl, max: Math.min(CONCURRENCY * BATCH + 4, 40) });
  pool.on("error", () => {});
  const effects = benchEffects(pool);
  const serverIsLocal = isLocalServer(database.url);
  const boss = await startBoss({
    connectionString: database.url,
    max: CONCURRENCY + 2,
    supervise: false,
    schedule: false,
    onError: (error) => log(`pg-boss: ${error.message}`),
  });
  try {
    await pool.query(
      "CREATE TABLE e2e_writes (id text PRIMARY KEY, tenant_id text NOT NULL, amount integer NOT NULL, created_at timestamptz NOT NULL DEFAULT now())",
    );
    await pool.query(
      "CREATE TABLE e2e_floor_claims (tenant_id text NOT NULL, key text NOT NULL, owner text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (tenant_id, key))",
    );
    // A side with no library: pg-boss's workers running `perJob` on each job of a batch at once.
    const raw = (perJob: (id: string) => Promise<unknown>) => (queue: string) =>
      phase(boss, pool, queue, serverIsLocal, async () => {
        for (let i = 0; i < CONCURRENCY; i++) {
          await boss.work<WriteJob>(queue, { batchSize: BATCH, pollingIntervalSeconds: 0.5 }, async (jobs) => {
            await Promise.all(jobs.map((job) => perJob(job.data.id)));
          });
        }
      });
    const without = raw((id) => pool.query({ ...WRITE, values: [id] }));
    const floor = raw((id) => floorJob(pool, id));
    const jobHandler: IdempotentHandler<WriteJob, void> = {
      kind: "job",
      tenant: () => "bench",
      run: async (data, job) => {
        await job.transaction(`write:${data.id}`, async (tx) => {
          await tx.query({ ...WRITE, values: [data.id] });
        });
      },
    };
    const onceHandler: IdempotentHandler<WriteJob, void> = {
      kind: "once",
      tenant: () => "bench",
      key: (data) => `write:${data.id}`,
      run: async (data) => {
        await pool.query({ ...WRITE, values: [data.id] });
      },
    };
    const withLibrary = (queue: string) =>
      phase(boss, pool, queue, serverIsLocal, () =>
        workIdempotent<WriteJob, void>(boss, queue, {
          effects,
          concurrency: CONCURRENCY,
          batchSize: BATCH,
          pollingIntervalSeconds: 0.5,
          deadLetterQueue: false,
          handler: HANDLER === "once" ? onceHandler : jobHandler,
        }),
      );

    const withFloor = HANDLER === "job";
    log("warming up");
    await without("e2e-warm-without");
    await withLibrary("e2e-warm-with");
    if (withFloor) await floor("e2e-warm-floor");

    type Side = "without" | "with" | "floor";
    const order: Side[] = withFloor
      ? ["without", "with", "floor", "floor", "with", "without"]
      : ["without", "with", "with", "without"];
    const side = () => ({ jobs: 0, s: 0, nodeUs: 0, postgresUs: serverIsLocal ? 0 : (null as number | null) });
    const totals = { with: side(), without: side(), floor: side() };
    const phases: Record<Side, (queue: string) => Promise<PhaseResult>> = { without, with: withLibrary, floor };
    for (const [i, name] of order.entries()) {
      const { perS, cpu } = await phases[name](`e2e-${name}-${i}`);
      const t = totals[name];
      t.jobs += JOBS;
      t.s += JOBS / perS;
      t.nodeUs += cpu.processUs;
      if (t.postgresUs !== null && cpu.postgresUs !== null) t.postgresUs += cpu.postgresUs;
      const busy = cpu.machineBusy === null ? "" : `, the machine ${Math.round(cpu.machineBusy * 100)} % busy`;
      log(
        `phase ${i + 1}: ${name === "floor" ? "the transactional floor" : `${name} the library`} ${perS.toFixed(0)} jobs/s (CPU per job: Node ${perJob(cpu.processUs, JOBS)} µs, PostgreSQL ${perJob(cpu.postgresUs, JOBS)} µs${busy})`,
      );
    }
    const cpuFields = (Object.keys(totals) as Side[])
      .filter((name) => totals[name].jobs > 0)
      .map((name) => {
        const t = totals[name];
        return `${name}_node_us=${perJob(t.nodeUs, t.jobs)} ${name}_pg_us=${perJob(t.postgresUs, t.jobs)}`;
      })
      .join(" ");
    const withPerS = totals.with.jobs / totals.with.s;
    const withoutPerS = totals.without.jobs / totals.without.s;
    const floorPerS = withFloor ? totals.floor.jobs / totals.floor.s : null;
    await boss.stop({ graceful: false, wait: true }).catch(() => {});

    const config = loadConfig();
    const brokerLines: string[] = [];
    for (const broker of BROKERS) {
      const url = broker === "rabbitmq" ? config.RABBITMQ_URL : config.NATS_URL;
      const options = {
        pool,
        effects,
        handler: HANDLER === "once" ? onceHandler : jobHandler,
        write: WRITE,
        jobs: JOBS,
        inFlight: IN_FLIGHT,
        url,
      };
      try {
        log(`${broker}: warming up (${IN_FLIGHT} in flight)`);
        await brokerPhase(broker, "without", options);
        await brokerPhase(broker, "with", options);
      } catch (error) {
        log(`${broker}: skipped, nothing usable at ${url} (${error instanceof Error ? error.message : String(error)})`);
        continue;
      }
      const t = { with: { jobs: 0, s: 0 }, without: { jobs: 0, s: 0 } };
      for (const [i, side] of order.entries()) {
        if (side === "floor") continue;
        const perS = await brokerPhase(broker, side, options);
        t[side].jobs += JOBS;
        t[side].s += JOBS / perS;
        log(`${broker} phase ${i + 1}: ${side} the library ${perS.toFixed(0)} jobs/s`);
      }
      const w = t.with.jobs / t.with.s;
      const wo = t.without.jobs / t.without.s;
      brokerLines.push(
        `e2e broker=${broker} ratio=${(w / wo).toFixed(3)} with_per_s=${w.toFixed(0)} without_per_s=${wo.toFixed(0)}`,
      );
    }
    const writes = await pool.query<{ n: string }>("SELECT count(*) AS n FROM e2e_writes");
    log(`${writes.rows[0]?.n} rows written; PostgreSQL ${database.serverVersion} (${database.where})`);
    await effects.close();
    for (const line of brokerLines) console.log(line);
    const floorFields =
      floorPerS === null
        ? ""
        : ` floor_per_s=${floorPerS.toFixed(0)} floor_ratio=${(floorPerS / withoutPerS).toFixed(3)} of_floor=${(withPerS / floorPerS).toFixed(3)}`;
    console.log(
      `e2e ratio=${(withPerS / withoutPerS).toFixed(3)} with_per_s=${withPerS.toFixed(0)} without_per_s=${withoutPerS.toFixed(0)}${floorFields} ${cpuFields}`,
    );
  } finally {
    await boss.stop({ graceful: false, wait: true }).catch(() => {});
    await pool.end().catch(() => {});
    await database.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
