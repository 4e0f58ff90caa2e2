import fs from "node:fs";
import pg from "pg";
import pino from "pino";
import { loadConfig } from "../config";
import { demoSteps, type Faults } from "../demo/handlers";
import { demoProviderClients, startDemoProviderServers } from "../demo/provider";
import { mariadbShop, postgresShop } from "../demo/shop";

/** The soak's account at the demo's provider, the same in every worker. */
const SOAK_PROVIDER_API_KEY = "sk_test_onceboard_soak";

import type { OrderMessage } from "../demo/settings";
import { createEffects, type JobContext } from "../idempotency";
import type { Decision, IdempotentHandler } from "../queues/deliveries";
import { startSoakConsumer } from "./brokers";
import {
  emptyCounters,
  type KillNote,
  SOAK_APP_PREFIX,
  SOAK_FLUSH_INTERVAL_MS,
  type SoakWorkerConfig,
  type SupervisorMessage,
  type WorkerMessage,
} from "./protocol";
import { INJECTED_CONSTRAINT } from "./verify";

/**
 * Stops the worker gracefully; resolves to the duplicate claims its last flush could not write and
 * the counts the library found no effect row for.
 */
export type StopSoakWorker = () => Promise<{ unflushedDuplicateClaims: number; droppedDuplicateCounts: number }>;

/**
 * One soak worker process: a consumer of the soak queue through its broker's adapter (lib/queues;
 * lib/soak/brokers.ts): pg-boss's consumeIdempotent keeps `concurrency` handler runs in flight
 * across batch fetches and completes finished jobs in batches; RabbitMQ's holds `concurrency`
 * unacked deliveries (prefetch); JetStream's runs `concurrency` pulled messages at once; each run is the demo's order pipeline (capture →
 * mark paid → receipt, from lib/demo) through the worker library. It reports counters to the
 * supervisor over IPC. When the supervisor arms it, it SIGKILLs itself at the next kill point it
 * draws, leaving a note with the number of runs that died with it.
 *
 * Not workIdempotent: its pg-boss pollers work each fetched batch to the end and then wait out
 * their polling interval, so runs would move through the pipeline in lockstep per batch, while the
 * kill points need runs at every stage at once and the soak needs the throughput.
 * consumeIdempotent refills the free slots while the other runs go on. Every kill point is inside
 * the handler (the pipeline wrapper below and lib/demo's fault hooks); a kill also takes the jobs
 * whose runs finished but whose batched ack had not gone out.
 */
export async function runSoakWorker(config: SoakWorkerConfig, send: (m: WorkerMessage) => void): Promise<StopSoakWorker> {
  const name = `${SOAK_APP_PREFIX}-worker-${config.index}`;
  const max = Math.min(config.concurrency + 2, 16);
  const pool = new pg.Pool({ connectionString: config.url, max, application_name: name });
  pool.on("error", () => {});
  // Work-around (lib/idempotency/db.ts, inNewTransaction): the library holds a pool client for a
  // transactional step without an 'error' listener, and pg-pool drops its own listener on
  // checkout, so a server that terminates the connection between two of the step's queries
  // (a restart, pg_terminate_backend) crashes the process with an unhandled 'error' event. A
  // listener on every client turns that into the failed query it should be.
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
  // The effects and the shop's tables: the soak's PostgreSQL, or its MariaDB database (--store mariadb).
  const shop = config.shopUrl ? mariadbShop(config.shopUrl, { max }) : postgresShop(pool);
  const logger = pino({ name, level: loadConfig().SOAK_LOG_LEVEL });
  const effects = createEffects({
    ...shop.effects,
    lease: config.leaseMs,
    wait: config.waitMs,
    retention: "7d",
    maxRetryWindow: "3d",
    // The soak flushes on SOAK_FLUSH_INTERVAL_MS itself (below), through the public flush(), so
    // that it knows what each flush wrote: the ground truth of what a SIGKILL loses.
    flushInterval: 0,
    logger,
    workerId: `${name}:${process.pid}`,
    // The slot's name, the same after the supervisor restarts it: the console counts its restarts by it.
    workerName: name,
  });
  let pending = emptyCounters();
  let armed = false;
  // Duplicate claims counted in this process, and that count at the snapshot of the last flush
  // that wrote everything (flushing: of the flush in flight). effects.flush() takes its snapshot
  // synchronously, before its first await, so the numbers line up with what it writes.
  let duplicateClaims = 0;
  let flushedDuplicateClaims = 0;
  let flushingDuplicateClaims: number | null = null;
  // Counts a flush applied to no effect row (the library's own counter), read after each flush: only
  // a flush changes it, so the value is current at a kill unless a flush was in flight.
  let droppedDuplicateCounts = 0;
  const readDropped = async () => {
    const metric = effects.registry?.getSingleMetric("idem_duplicate_counts_dropped_total");
    droppedDuplicateCounts = Number((await metric?.get())?.values[0]?.value ?? 0);
  };
  // One flush; when it wrote everything, the count at its start is flushed. Max: the stop's flush
  // may finish after the periodic one it waited for.
  const flushNoting = async () => {
    const snapshot = duplicateClaims;
    if (await effects.flush().catch(() => false)) flushedDuplicateClaims = Math.max(flushedDuplicateClaims, snapshot);
  };
  const flushBookkeeping = async () => {
    if (flushingDuplicateClaims !== null) return;
    flushingDuplicateClaims = duplicateClaims;
    await flushNoting();
    flushingDuplicateClaims = null;
    await readDropped();
  };
  const flusher = setInterval(() => void flushBookkeeping(), SOAK_FLUSH_INTERVAL_MS);
  // Set once the consumer runs; a kill point can only be reached by one of its runs.
  let inFlight = () => 0;

  // The SIGKILL: every run in flight dies wherever it is; the note says how many.
  const die = (where: string) => {
    const note: KillNote = {
      pid: process.pid,
      inflight: inFlight(),
      where,
      unreported: pending,
      unflushedDuplicateClaims: {
        atMost: duplicateClaims - flushedDuplicateClaims,
        atLeast: duplicateClaims - (flushingDuplicateClaims ?? flushedDuplicateClaims),
      },
      droppedDuplicateCounts,
    };
    fs.writeFileSync(config.noteFile, JSON.stringify(note));
    process.kill(process.pid, "SIGKILL");
  };
  // A kill point: once armed, each point a run passes is drawn with the same chance, so the
  // run that pulls the trigger dies at a varying step boundary (and the others at random points).
  const point = (where: string) => {
    if (armed && Math.random() < 0.3) die(where);
  };
  const faults: Faults = {
    crash: (where) => point(where),
    maybeSlow: async () => {},
    violation: () => {
      point("inside mark-paid's transaction, before its commit");
      const inject = Math.random() < config.violationRate;
      if (inject) pending.injectedViolations++;
      return inject;
    },
  };
  // The demo's providers, served from this process: their storage is the database's, so every
  // worker's servers are one provider (as a provider's API nodes are), and a killed worker's go with it.
  // One account: the provider scopes Idempotency-Keys per API key, and a takeover in another worker must replay.
  const providerServers = await startDemoProviderServers({ databaseUrl: config.url, apiKey: SOAK_PROVIDER_API_KEY });
  const demo = demoSteps(shop, faults, demoProviderClients(providerServers.endpoints));
  // Each step's duplicate claim counted as soon as the step returns (job.steps grows by one).
  const counted =
    <A extends unknown[], R>(step: (job: JobContext<pg.PoolClient>, ...args: A) => Promise<R>) =>
    async (job: JobContext<pg.PoolClient>, ...args: A): Promise<R> => {
      const value = await step(job, ...args);
      if (job.steps.at(-1)?.result === "duplicate") {
        duplicateClaims++;
        pending.duplicateClaims++;
      }
      return value;
    };
  const steps = { capture: counted(demo.capture), markPaid: counted(demo.markPaid), receipt: counted(demo.receipt) };
  const countSteps = (job: JobContext<pg.PoolClient>) => {
    for (const s of job.steps) {
      if (s.result === "ran") pending.stepsRan++;
      else if (s.result === "duplicate") pending.stepsDuplicate++;
      else pending.stepsAbandoned++;
      if (s.resumed) pending.stepsResumed++;
    }
  };
  // The demo's order.paid pipeline, step for step, with kill points between the steps.
  const handler: IdempotentHandler<OrderMessage, unknown> = {
    kind: "job",
    tenant: (m) => m.tenant,
    run: async (m, job) => {
      pending.runs++;
      point("before the first claim");
      const charge = await steps.capture(job, m);
      point("between capture and mark-paid");
      try {
        await steps.markPaid(job, m, charge.chargeId);
      } catch (error) {
        if (shop.duplicateKeyOf(error) === INJECTED_CONSTRAINT) {
          const id = `${m.tenant}\u0001mark-paid:${m.orderId}`;
          pending.violationKeys[id] = (pending.violationKeys[id] ?? 0) + 1;
          // The moment a worker used to lose its violations: they sat in the rollup until the flush.
          if (config.killAfterViolation && Math.random() < 0.5) die("right after an uncaught violation");
        }
        throw error;
      }
      point("between mark-paid and the receipt");
      await steps.receipt(job, m);
      point("after the last step, before the ack");
      countSteps(job);
      return { chargeId: charge.chargeId };
    },
  };

  const countDecision = (decision: Decision<unknown>) => {
    switch (decision.action) {
      case "ack":
        pending.acked++;
        if (decision.duplicate) pending.suppressed++;
        return;
      case "retry-later":
        pending.retriedLater++;
        return;
      case "dead-letter":
        pending.deadLettered++;
        return;
      case "fail": {
        pending.failed++;
        const e = decision.error as { code?: string };
        if (e?.code === "LEASE_LOST") pending.leaseLost++;
        const c = shop.duplicateKeyOf(decision.error);
        if (c !== null) pending.violations[c] = (pending.violations[c] ?? 0) + 1;
        return;
      }
    }
  };
  const consumer = await startSoakConsumer(config, { effects, handler, onDecision: countDecision, name });

  const report = () => {
    const counters = pending;
    pending = emptyCounters();
    send({ type: "progress", counters });
  };
  const reporter = setInterval(report, 250);

  process.on("message", (m: SupervisorMessage) => {
    if (m.type === "arm") armed = true;
  });
  inFlight = () => consumer.inFlight();
  send({ type: "ready" });

  return async () => {
    await consumer.stop();
    clearInterval(reporter);
    clearInterval(flusher);
    // The last flush (effects.flush() waits for one in flight, then writes the rest), so that what a
    // graceful stop leaves unwritten is reported, not mistaken for what a SIGKILL may lose.
    await flushNoting();
    await readDropped();
    await effects.close().catch(() => {});
    await providerServers.close().catch(() => {});
    await shop.close();
    await pool.end().catch(() => {});
    report();
    return { unflushedDuplicateClaims: duplicateClaims - flushedDuplicateClaims, droppedDuplicateCounts };
  };
}
