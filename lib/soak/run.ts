import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { loadConfig } from "../config";
import { mariadbShop, postgresShop, type Shop } from "../demo/shop";
import { type SoakPublisher, startSoakPublisher } from "./brokers";
import { type OutageReport, openSoakDatabase } from "./database";
import { type FaultCounts, type FaultProxy, startFaultProxy } from "./fault-proxy";
import { MARIADB_OUTAGE_DOWN_MS, openSoakMariadb, type SoakMariadb } from "./mariadb";
import type { SoakOptions } from "./options";
import { createProducer, planDeliveries, type SoakPlan } from "./producer";
import { SOAK_APP_PREFIX } from "./protocol";
import {
  type BookkeepingLoss,
  bookkeepingLoss,
  formatDetails,
  formatFaultDetails,
  type MemorySample,
  sampleSoakMemory,
  summaryLine,
} from "./report";
import { emptyPoolStats, startWorkerPool, type WorkerPoolStats } from "./supervisor";
import { INJECTED_CONSTRAINT, type SoakVerification, verifySoak, violationsLost } from "./verify";

export interface SoakResult {
  ok: boolean;
  /** Why the soak failed, one line each. */
  failures: string[];
  plan: SoakPlan;
  published: number;
  database: string;
  outage: OutageReport | null;
  workers: WorkerPoolStats;
  verification: SoakVerification | null;
  /** Set when the run was stopped before everything was published: what had been (the verdict's scope). */
  stoppedEarly: { published: number; orders: number } | null;
  /** What the fault proxy injected (null without --faults proxy). */
  faults: FaultCounts | null;
  /** The library's batched bookkeeping against the workers' ground truth. */
  bookkeeping: BookkeepingLoss | null;
  /** Memory (PSS) of the soak's processes, sampled every 30 s. */
  memory: MemorySample[];
  durationSeconds: number;
  /** `mariadb`: the server's version, with --store mariadb. */
  machine: { cpus: number; cpuModel: string; memoryGb: number; node: string; postgres: string; mariadb?: string };
  /** The last line, exactly. */
  summary: string;
}

/** Effect lease: a killed worker's claims are taken over this long after it died. */
const LEASE_MS = 3000;
/** A stalled reply is held this long: past the lease, so a successor takes the claim over meanwhile. */
const STALL_MS = LEASE_MS + 2000;
/** How long the drained workers get to stop gracefully before they are SIGKILLed. */
const WORKER_STOP_TIMEOUT_MS = 60_000;

/**
 * `npm run soak`: real worker processes (child processes), a real broker (pg-boss, BullMQ, RabbitMQ or NATS JetStream: `--broker`),
 * a real PostgreSQL, and the effects store (`--store`: that PostgreSQL, or the machine's MariaDB), with
 * duplicates, SIGKILLs and an outage of the effects store; then the verdict from the records.
 */
export async function runSoak(
  options: SoakOptions,
  io: {
    log: (line: string) => void;
    progress: (line: string) => void;
    env?: NodeJS.ProcessEnv;
    /** True once the run should stop publishing and finish early: drain, then verify what was published. */
    stopRequested?: () => boolean;
  },
): Promise<SoakResult> {
  const started = Date.now();
  const { log } = io;
  const plan = planDeliveries(options.deliveries, options.duplicates);
  const db = await openSoakDatabase(io.env ?? process.env, { synchronousCommit: options.synchronousCommit }, log);
  const failures: string[] = [];
  const noteDir = fs.mkdtempSync(path.join(os.tmpdir(), "onceboard-soak-notes-"));
  const pool = new pg.Pool({ connectionString: db.url, max: 4, application_name: `${SOAK_APP_PREFIX}-supervisor` });
  pool.on("error", () => {});
  let broker: SoakPublisher | undefined;
  let workers: Awaited<ReturnType<typeof startWorkerPool>> | undefined;
  let poolStats: WorkerPoolStats = emptyPoolStats();
  let proxy: FaultProxy | undefined;
  const memory: MemorySample[] = [];
  let memoryTimer: NodeJS.Timeout | undefined;
  let outage: OutageReport | null = null;
  let verification: SoakVerification | null = null;
  let bookkeeping: BookkeepingLoss | null = null;
  let stoppedEarly: { published: number; orders: number } | null = null;
  let published = 0;
  let postgresVersion = "unknown";
  // --store mariadb: the effects and the shop's tables on the machine's MariaDB (the broker's and the provider's stay here).
  let mariadb: SoakMariadb | undefined;
  let shop: Shop = postgresShop(pool);
  const storeName = options.store === "mariadb" ? "MariaDB" : "PostgreSQL";
  try {
    postgresVersion = (await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]?.v ?? "unknown";
    const config = loadConfig();
    if (options.store === "mariadb") {
      mariadb = await openSoakMariadb(config.MARIADB_URL, log);
      shop = mariadbShop(mariadb.url, { max: 4 });
      log(
        `effects store: ${mariadb.describe}; pg-boss (if the broker), the provider and the dead letters stay in ${db.describe}`,
      );
    }
    broker = await startSoakPublisher(options.broker, {
      pool,
      databaseUrl: db.url,
      redisUrl: config.REDIS_URL,
      rabbitUrl: config.RABBITMQ_URL,
      natsUrl: config.NATS_URL,
    });
    log(`broker: ${broker.describe}`);
    const outageKind = mariadb
      ? `simulated MariaDB restart (every connection cut, new ones refused for ${MARIADB_OUTAGE_DOWN_MS / 1000} s)`
      : `PostgreSQL ${db.outageKind === "restart" ? "restart" : "outage (connections terminated)"}`;
    log(
      `${options.deliveries} deliveries: ${plan.orders} orders + ${plan.deliveries - plan.orders} duplicates (${plan.concurrent} concurrent, ${plan.republished} re-published with new message ids, ${plan.late} late); ${options.workers} worker processes x ${options.concurrency} in flight; ${Math.round(options.kills * 100)}% of handler runs killed; one ${outageKind} ${options.outageAt === 0.5 ? "midway" : `at ${Math.round(options.outageAt * 100)}%`}; ${db.describe}`,
    );
    let workerUrl = db.url;
    if (options.faults === "proxy") {
      const target = new URL(db.url);
      proxy = await startFaultProxy({
        target: { host: target.hostname, port: Number(target.port || 5432) },
        rates: { ...options.faultRates, stallMs: STALL_MS },
      });
      workerUrl = proxy.urlFor(db.url);
      const r = options.faultRates;
      log(
        `fault proxy on ${proxy.host}:${proxy.port} between every worker and PostgreSQL: replies lost after ${r.replyLost * 100}% of commit points (COMMIT, the claim, the completion), ${r.resetInTransaction * 100}% of requests inside a transaction reset, ${r.stall * 100}% of replies stalled ${STALL_MS} ms (lease ${LEASE_MS} ms), every packet delayed 0–${r.latencyMaxMs} ms`,
      );
    }
    const sampleMemory = () => {
      const sample = sampleSoakMemory(workers?.pids() ?? [], (Date.now() - started) / 1000, db.serverDataDir);
      if (!sample) return;
      memory.push(sample);
      // Every 10 minutes on stdout too, so a long run shows its memory while it runs.
      if (memory.length % 20 === 1) {
        log(
          `memory at ${sample.atSeconds} s: supervisor ${sample.supervisorMb} MiB, workers ${sample.workersMb} MiB, PostgreSQL ${sample.postgresMb} MiB (PSS)`,
        );
      }
    };
    memoryTimer = setInterval(sampleMemory, 30_000);
    workers = await startWorkerPool({
      workers: options.workers,
      noteDir,
      log,
      config: {
        endpoint: broker.endpoint,
        url: workerUrl,
        shopUrl: mariadb?.url,
        concurrency: options.concurrency,
        leaseMs: LEASE_MS,
        waitMs: 1000,
        inFlightDelayMs: 1000,
        violationRate: 0.002,
        killAfterViolation: options.kills > 0,
      },
    });
    poolStats = workers.stats;
    const readyBy = Date.now() + 120_000;
    while (workers.readyCount() < options.workers) {
      if (Date.now() > readyBy) throw new Error("the soak's worker processes did not start within 120 s");
      await sleep(100);
    }

    const window = Math.max(500, options.workers * options.concurrency * 8);
    const producer = createProducer({ shop, broker, plan, window, batch: 200 });
    const publisher = broker;
    const w = workers;
    const done = () => Math.min(w.stats.counters.acked, producer.progress.published);
    let outagePromise: Promise<void> | null = null;
    let lastLine = 0;
    let lastDone = 0;
    let lastAt = Date.now();
    let rate = 0;
    const runStarted = Date.now();

    const showProgress = (force = false) => {
      const now = Date.now();
      if (!force && now - lastLine < 2000) return;
      const d = done();
      if (now > lastAt) rate = (d - lastDone) / ((now - lastAt) / 1000);
      lastDone = d;
      lastAt = now;
      lastLine = now;
      const c = w.stats.counters;
      const pct = c.runs > 0 ? ((w.stats.killedRuns / c.runs) * 100).toFixed(1) : "0.0";
      const f = proxy?.counts;
      const faults = f
        ? ` | faults: ${f.replyLost.commit + f.replyLost.claim + f.replyLost.complete} replies lost, ${f.resetInTransaction} resets, ${f.stalledReply} stalls`
        : "";
      io.progress(
        `soak: ${d}/${plan.deliveries} deliveries (${Math.round((d / plan.deliveries) * 100)}%) ${Math.round(rate)}/s | runs ${c.runs} | killed ${w.stats.killedRuns} (${pct}%) in ${w.stats.kills} SIGKILLs | suppressed ${c.suppressed} | ${mariadb ? "mariadb outages" : `pg ${db.outageKind === "restart" ? "restarts" : "outages"}`} ${outage ? 1 : 0}${outagePromise && !outage ? " (now)" : ""}${faults} | ${Math.round((now - runStarted) / 1000)} s`,
      );
    };

    // Publish, kill, restart: until every delivery is published.
    let idleSince = Date.now();
    let lastRuns = 0;
    for (;;) {
      const d = done();
      if (io.stopRequested?.()) {
        stoppedEarly = { published: producer.progress.published, orders: producer.progress.orders };
        log(
          `stopped early on request with ${stoppedEarly.published} of ${plan.deliveries} deliveries published (${stoppedEarly.orders} orders): draining, then the verdict on what was published`,
        );
        break;
      }
      const more = await producer.step(d, producer.progress.published - d < window / 4);
      published = producer.progress.published;
      // The outage, once, halfway through (or at --outage-at).
      if (!outagePromise && d >= plan.deliveries * options.outageAt) {
        log(
          `${options.outageAt === 0.5 ? "halfway" : `${Math.round(options.outageAt * 100)}%`} (${d} deliveries done): ${storeName} outage now`,
        );
        outagePromise = (mariadb ? mariadb.outage() : db.outage()).then(
          (r) => {
            outage = r;
            log(r.detail);
          },
          (error: unknown) => {
            failures.push(`the ${storeName} outage failed: ${error instanceof Error ? error.message : String(error)}`);
          },
        );
      }
      // Kills: keep killed runs near the target share of all runs, never during the outage and
      // not in the last few percent (each kill leaves jobs that wait out their expiry).
      const c = w.stats.counters;
      const outageBusy = outagePromise !== null && outage === null && failures.length === 0;
      if (
        !outageBusy &&
        d < plan.deliveries * 0.97 &&
        w.calm() &&
        w.stats.killedRuns + options.concurrency <= options.kills * c.runs
      ) {
        w.arm();
      }
      showProgress();
      if (c.runs !== lastRuns) {
        lastRuns = c.runs;
        idleSince = Date.now();
      } else if (Date.now() - idleSince > 180_000) {
        throw new Error("no handler run for 180 s: the soak is stuck (see the worker output above)");
      }
      if (!more) break;
      await sleep(more && producer.progress.published - d < window ? 20 : 100);
    }
    if (outagePromise) await outagePromise;
    else failures.push(`the run ended before the ${storeName} outage`);

    // Drain: nothing waiting, retrying or active in the soak's queue, and (for the brokers whose
    // count leaves out unacked deliveries) no handler run or ack for two checks in a row.
    let quiet = 0;
    let lastAcked = -1;
    for (;;) {
      let n = -1;
      try {
        n = await publisher.open();
      } catch {
        // restarting
      }
      const c = w.stats.counters;
      const still = c.acked === lastAcked && c.runs === lastRuns;
      lastAcked = c.acked;
      quiet = n === 0 && (options.broker === "pg-boss" || still) ? quiet + 1 : 0;
      if (quiet >= (options.broker === "pg-boss" ? 2 : 4)) break;
      if (c.runs !== lastRuns) {
        lastRuns = c.runs;
        idleSince = Date.now();
      } else if (Date.now() - idleSince > 180_000) {
        throw new Error(`no handler run for 180 s with ${n} deliveries still open: the soak is stuck`);
      }
      showProgress();
      await sleep(500);
    }
    showProgress(true);
    sampleMemory();
    await w.stop(WORKER_STOP_TIMEOUT_MS);
    workers = undefined;
    const settled = await broker.settled(published);
    log(`broker: ${settled.completed} completed = ${settled.note}`);
    verification = await verifySoak(pool, settled, shop);
    const v = verification;
    if (v.doubleEffects > 0)
      failures.push(
        `double effects: ${v.doubleCaptures} double captures, ${v.doubleReceipts} double receipts, ${v.doubleEntries} double accounting entries`,
      );
    if (v.lost > 0)
      failures.push(
        `lost: ${v.unpaid} orders not captured or not paid, ${v.missingEntries} not booked, ${v.unexplainedMissingReceipts} receipts missing without an abandoned step`,
      );
    if (v.captures !== v.orders) failures.push(`captures (${v.captures}) differ from orders (${v.orders})`);
    // Stopped early: the verdict covers what was published.
    const expectedOrders = stoppedEarly?.orders ?? plan.orders;
    const expectedDeliveries = stoppedEarly?.published ?? plan.deliveries;
    if (v.orders !== expectedOrders)
      failures.push(`orders in the shop (${v.orders}) differ from orders published (${expectedOrders})`);
    if (v.chargeMismatches > 0) failures.push(`${v.chargeMismatches} paid orders carry a charge id the provider does not have`);
    if (v.brokerCompleted !== expectedDeliveries)
      failures.push(
        `${options.broker} completed ${v.brokerCompleted} of the ${expectedDeliveries} published deliveries (${v.brokerFailed} failed)`,
      );
    if (v.stuckEffects > 0) failures.push(`${v.stuckEffects} effects still in progress or failed after every delivery was acked`);
    const c = w.stats.counters;
    const otherViolations = new Set<string>(
      [...Object.keys(c.violations), ...Object.keys(v.rolledUpViolations)].filter((k) => k !== INJECTED_CONSTRAINT),
    );
    if (otherViolations.size > 0)
      failures.push(`uncaught unique violations other than the injected one: ${[...otherViolations].join(", ")}`);
    const caught = c.violations[INJECTED_CONSTRAINT] ?? 0;
    if (caught > c.injectedViolations)
      failures.push(`${caught} uncaught violations on ${INJECTED_CONSTRAINT}, but only ${c.injectedViolations} were injected`);
    const lostViolations = violationsLost(c.violationKeys, v.recordedViolationKeys);
    if (lostViolations > 0)
      failures.push(`${lostViolations} uncaught violations came back to a handler but have no row in uncaught_violation_keys`);
    const rows = Object.values(v.recordedViolationKeys).reduce((a, n) => a + n, 0);
    if (rows > c.injectedViolations)
      failures.push(`${rows} violation rows on ${INJECTED_CONSTRAINT}, but only ${c.injectedViolations} were injected`);
    if (w.stats.unexpectedExits > 0) failures.push(`${w.stats.unexpectedExits} worker processes exited without being killed`);
    if (c.deadLettered > 0) failures.push(`${c.deadLettered} deliveries dead-lettered`);
    if (options.kills > 0 && w.stats.kills === 0) failures.push("no worker was killed");
    if (proxy) {
      const f = proxy.counts;
      const missing = [
        f.replyLost.commit + f.replyLost.claim + f.replyLost.complete === 0 &&
          options.faultRates.replyLost > 0 &&
          "no reply was lost",
        f.resetInTransaction === 0 && options.faultRates.resetInTransaction > 0 && "no connection was reset",
        f.stalledReply === 0 && options.faultRates.stall > 0 && "no reply was stalled",
      ].filter(Boolean);
      if (missing.length > 0 && plan.deliveries >= 10_000)
        failures.push(`the fault proxy injected too little: ${missing.join(", ")}`);
    }
    bookkeeping = bookkeepingLoss(c.duplicateClaims, v, w.stats);
    // Drained before the stop, so a graceful stop has nothing to lose: what it did lose is named
    // apart, or it would read as the SIGKILL bound's failure below.
    if (bookkeeping.killedAtStopDeadline > 0)
      failures.push(
        `${bookkeeping.killedAtStopDeadline} workers had not stopped ${WORKER_STOP_TIMEOUT_MS / 1000} s after they were asked to and were SIGKILLed, with their unflushed bookkeeping`,
      );
    // Nothing prunes or deletes an effect during a soak, so every entry has its row.
    if (bookkeeping.droppedDuplicateCounts > 0)
      failures.push(
        `${bookkeeping.droppedDuplicateCounts} duplicate counts found no effect row at their flush, though no effect was deleted`,
      );
    if (bookkeeping.unflushedAtStop > 0)
      failures.push(
        `the workers' last flushes at the graceful stop left ${bookkeeping.unflushedAtStop} duplicate claims unwritten`,
      );
    // The bound: only a SIGKILL loses batched bookkeeping, and no more than its worker had not flushed.
    const b = bookkeeping;
    if (b.suppressionsLost > b.unflushedAtMost || b.duplicateCountsLost > b.unflushedAtMost)
      failures.push(
        `the batched bookkeeping lost more than the killed workers had unflushed: suppressions_lost=${b.suppressionsLost}, duplicate_counts_lost=${b.duplicateCountsLost}, unflushed at most ${b.unflushedAtMost}`,
      );
    for (const line of formatDetails(v, w.stats, expectedDeliveries, options.broker)) log(line);
    for (const line of formatFaultDetails(proxy?.counts ?? null, bookkeeping, memory, { leaseMs: LEASE_MS, stallMs: STALL_MS }))
      log(line);
  } catch (error) {
    failures.push(error instanceof Error ? error.message : String(error));
  } finally {
    clearInterval(memoryTimer);
    await workers?.stop(5000).catch(() => {});
    await proxy?.close().catch(() => {});
    await broker?.close(options.keep).catch(() => {});
    await shop.close();
    const keptMariadb = await mariadb?.close({ keep: options.keep || failures.length > 0 }).catch(() => undefined);
    if (keptMariadb) log(keptMariadb);
    await pool.end().catch(() => {});
    fs.rmSync(noteDir, { recursive: true, force: true });
    const kept = await db.close({ keep: options.keep || failures.length > 0 }).catch(() => undefined);
    if (kept) log(kept);
  }
  const v = verification as SoakVerification | null;
  const result: SoakResult = {
    ok: failures.length === 0,
    failures,
    plan,
    published,
    database: mariadb ? `effects on ${mariadb.describe}; the broker and the provider on ${db.describe}` : db.describe,
    outage,
    workers: poolStats,
    verification: v,
    faults: proxy ? proxy.counts : null,
    bookkeeping,
    stoppedEarly,
    memory,
    durationSeconds: Math.round((Date.now() - started) / 100) / 10,
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? "unknown",
      memoryGb: Math.round(os.totalmem() / 2 ** 30),
      node: process.version,
      postgres: postgresVersion,
      ...(mariadb ? { mariadb: mariadb.version } : {}),
    },
    summary: "",
  };
  result.summary = summaryLine({
    deliveries: v ? v.brokerCompleted : published,
    suppressed: result.workers.counters.suppressed,
    killed: result.workers.killedRuns,
    doubleEffects: v ? v.doubleEffects : 0,
    lost: v ? v.lost : 0,
    violationsLost: v ? violationsLost(result.workers.counters.violationKeys, v.recordedViolationKeys) : 0,
    suppressionsLost: bookkeeping?.suppressionsLost ?? 0,
    largestLossPerKill: bookkeeping?.largestLossPerKill ?? 0,
    faults: result.faults,
  });
  return result;
}
