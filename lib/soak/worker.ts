import fs from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import type PgBoss from "pg-boss";
import pino from "pino";
import { loadConfig } from "../config";
import { demoSteps, type Faults } from "../demo/handlers";
import type { OrderMessage } from "../demo/settings";
import { createEffects, type JobContext } from "../idempotency";
import { type Decision, type IdempotentHandler, processDelivery } from "../queues/core";
import { CARRY_FIELD, deliveryOf, startBoss } from "../queues/pgboss";
import {
  addCounters,
  emptyCounters,
  type KillNote,
  SOAK_APP_PREFIX,
  SOAK_BOSS_SCHEMA,
  SOAK_QUEUE,
  type SoakWorkerConfig,
  type SupervisorMessage,
  type WorkerCounters,
  type WorkerMessage,
} from "./protocol";

/**
 * One soak worker process: a pg-boss consumer of the soak queue that fetches in batches and keeps
 * `concurrency` handler runs in flight, each run the demo's order pipeline (capture → mark paid →
 * receipt, from lib/demo) through the worker library. It reports counters to the supervisor over
 * IPC. When the supervisor arms it, it SIGKILLs itself at the next kill point it draws, leaving a
 * note with the number of runs that died with it.
 *
 * Why not lib/queues' workIdempotent: it works a fetched batch to the end before the next fetch,
 * while the soak keeps `concurrency` runs in flight across fetches (the kill points need runs at
 * every stage at once) and acks as runs finish. Each job is still decided by the adapters'
 * processDelivery and deliveryOf, and the in-flight copy is sent exactly as the pg-boss adapter
 * sends it.
 */
export async function runSoakWorker(config: SoakWorkerConfig, send: (m: WorkerMessage) => void): Promise<() => Promise<void>> {
  const name = `${SOAK_APP_PREFIX}-worker-${config.index}`;
  const boss: PgBoss = await startBoss({
    connectionString: config.url,
    schema: SOAK_BOSS_SCHEMA,
    application_name: `${name}-boss`,
    max: 3,
    supervise: false,
    schedule: false,
    migrate: false,
    onError: () => {},
  });

  const pool = new pg.Pool({ connectionString: config.url, max: Math.min(config.concurrency + 2, 16), application_name: name });
  pool.on("error", () => {});
  // Work-around (lib/idempotency/db.ts, inNewTransaction): the library holds a pool client for a
  // transactional step without an 'error' listener, and pg-pool drops its own listener on
  // checkout, so a server that terminates the connection between two of the step's queries
  // (a restart, pg_terminate_backend) crashes the process with an unhandled 'error' event. A
  // listener on every client turns that into the failed query it should be.
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
  const logger = pino({ name, level: loadConfig().SOAK_LOG_LEVEL });
  const effects = createEffects({
    db: pool,
    lease: config.leaseMs,
    wait: config.waitMs,
    retention: "7d",
    maxRetryWindow: "3d",
    flushInterval: 2000,
    logger,
    workerId: `${name}:${process.pid}`,
  });
  let pending = emptyCounters();
  let inflight = 0;
  let armed = false;

  // The SIGKILL: every run in flight dies wherever it is; the note says how many.
  const die = (where: string) => {
    const note: KillNote = { pid: process.pid, inflight, where, unreported: pending };
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
  const steps = demoSteps(pool, faults);
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
      point("before the first claim");
      const charge = await steps.capture(job, m);
      point("between capture and mark-paid");
      await steps.markPaid(job, m, charge.chargeId);
      point("between mark-paid and the receipt");
      await steps.receipt(job, m);
      point("after the last step, before the ack");
      countSteps(job);
      return { chargeId: charge.chargeId };
    },
  };

  // Acks go out in batches: one UPDATE for every job finished since the last flush.
  let toComplete: string[] = [];
  const flushCompletions = async () => {
    if (toComplete.length === 0) return;
    const ids = toComplete;
    toComplete = [];
    for (let attempt = 1; ; attempt++) {
      try {
        await boss.complete(SOAK_QUEUE, ids);
        return;
      } catch {
        // The database is restarting. After a few tries let the jobs expire: their redelivery
        // is suppressed as a duplicate.
        if (attempt >= 20) return;
        await sleep(250 * attempt);
      }
    }
  };
  const completer = setInterval(() => void flushCompletions(), 25);

  let wake: (() => void) | undefined;
  const finished = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };

  const apply = async (job: PgBoss.JobWithMetadata<OrderMessage>, data: OrderMessage, decision: Decision<unknown>) => {
    switch (decision.action) {
      case "ack":
        pending.acked++;
        if (decision.duplicate) pending.suppressed++;
        toComplete.push(job.id);
        return;
      case "retry-later": {
        // As the pg-boss adapter does: a copy carrying the message id and first publish time.
        const d = deliveryOf(SOAK_QUEUE, job);
        const carried = {
          messageId: data.msgId,
          publishedAt: data.publishedAt,
          attempt: d.delivery.attempt,
        };
        await boss.send(SOAK_QUEUE, { ...data, [CARRY_FIELD]: carried }, { startAfter: Math.ceil(decision.delayMs / 1000) });
        pending.retriedLater++;
        toComplete.push(job.id);
        return;
      }
      case "dead-letter":
        pending.deadLettered++;
        await boss.fail(SOAK_QUEUE, job.id, { deadLetter: decision.reason });
        return;
      case "fail": {
        pending.failed++;
        const e = decision.error as { code?: string; constraint?: string; message?: string };
        if (e?.code === "23505") {
          const c = e.constraint ?? "unknown";
          pending.violations[c] = (pending.violations[c] ?? 0) + 1;
        }
        await boss.fail(SOAK_QUEUE, job.id, { message: e?.message ?? String(decision.error) });
        return;
      }
    }
  };

  const runJob = async (job: PgBoss.JobWithMetadata<OrderMessage>) => {
    inflight++;
    pending.runs++;
    try {
      const { data, delivery } = deliveryOf<OrderMessage>(SOAK_QUEUE, job, {
        messageId: (d) => d.msgId,
        publishedAt: (d) => new Date(d.publishedAt),
      });
      const decision = await processDelivery(effects, handler, data, delivery, { inFlightDelayMs: config.inFlightDelayMs });
      await apply(job, data, decision).catch(() => {
        // Could not tell the broker (the database is down): the job expires and comes back.
      });
    } finally {
      inflight--;
      finished();
    }
  };

  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      const room = config.concurrency - inflight;
      if (room < Math.max(1, Math.floor(config.concurrency / 4))) {
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 50);
        });
        continue;
      }
      // pg-boss's fetch returns [] when the database is unreachable.
      const jobs = await boss.fetch<OrderMessage>(SOAK_QUEUE, { batchSize: room, includeMetadata: true });
      if (stopping) {
        if (jobs.length > 0)
          await boss
            .fail(
              SOAK_QUEUE,
              jobs.map((j) => j.id),
            )
            .catch(() => {});
        break;
      }
      for (const job of jobs) void runJob(job);
      if (jobs.length === 0) await sleep(100);
    }
  })();

  const report = () => {
    const counters = pending;
    pending = emptyCounters();
    send({ type: "progress", counters });
  };
  const reporter = setInterval(report, 250);

  process.on("message", (m: SupervisorMessage) => {
    if (m.type === "arm") armed = true;
  });
  send({ type: "ready" });

  return async () => {
    stopping = true;
    await loop;
    const deadline = Date.now() + 30_000;
    while (inflight > 0 && Date.now() < deadline) await sleep(20);
    clearInterval(completer);
    clearInterval(reporter);
    await flushCompletions();
    await effects.close().catch(() => {});
    await boss.stop({ graceful: false, wait: true, timeout: 2000 }).catch(() => {});
    await pool.end().catch(() => {});
    report();
  };
}

/** Merges a kill note's unreported counters (exported for the supervisor). */
export function mergeNote(into: WorkerCounters, note: KillNote): void {
  addCounters(into, note.unreported);
}
