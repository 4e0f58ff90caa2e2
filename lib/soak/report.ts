import fs from "node:fs";
import type { FaultCounts } from "./fault-proxy";
import type { SoakOptions } from "./options";
import { SOAK_FLUSH_INTERVAL_MS } from "./protocol";
import type { WorkerPoolStats } from "./supervisor";
import { INJECTED_CONSTRAINT, type SoakVerification, violationsLost } from "./verify";

/**
 * What `npm run soak` prints: the summary line, the detail lines before it, the bookkeeping a
 * SIGKILL may lose and the memory samples taken along the way (run.ts runs the soak itself).
 */

/** What a killed worker lost of the library's batched bookkeeping, against the handlers' count. */
export interface BookkeepingLoss {
  /** Duplicate claims the handlers saw (ground truth). */
  duplicateClaims: number;
  /** Ground truth minus the rollups' suppressed count (never below 0). */
  suppressionsLost: number;
  /** Ground truth minus sum(effects.duplicate_count) (never below 0). */
  duplicateCountsLost: number;
  /** The largest number of unflushed duplicate claims one killed worker took with it (its note). */
  largestLossPerKill: number;
  /** The killed workers' unflushed duplicate claims, summed: the measured loss must lie in [atLeast, atMost]. */
  unflushedAtMost: number;
  unflushedAtLeast: number;
  /** The graceful stop at the end (WorkerPoolStats.atStop): what the last flushes left, the workers killed at its deadline. */
  unflushedAtStop: number;
  killedAtStopDeadline: number;
  /** Duplicate counts the library's flushes found no effect row for (WorkerPoolStats.droppedDuplicateCounts). */
  droppedDuplicateCounts: number;
}

export interface MemorySample {
  atSeconds: number;
  /** Proportional set size in MiB: the supervisor (producer, proxy), the worker processes together, */
  supervisorMb: number;
  workersMb: number;
  /** and the soak's embedded PostgreSQL (0 on DATABASE_URL's server, which is not the soak's). */
  postgresMb: number;
}

export function summaryLine(r: {
  deliveries: number;
  suppressed: number;
  killed: number;
  doubleEffects: number;
  lost: number;
  violationsLost: number;
  suppressionsLost: number;
  largestLossPerKill: number;
  faults: FaultCounts | null;
}): string {
  const f = r.faults;
  const lostReplies = f ? f.replyLost.commit + f.replyLost.claim + f.replyLost.complete : 0;
  return `soak deliveries=${r.deliveries} duplicates_suppressed=${r.suppressed} killed=${r.killed} double_effects=${r.doubleEffects} lost=${r.lost} violations_lost=${r.violationsLost} suppressions_lost=${r.suppressionsLost} largest_loss_per_kill=${r.largestLossPerKill} faults_reply_lost=${lostReplies} faults_reset=${f?.resetInTransaction ?? 0} faults_stall=${f?.stalledReply ?? 0} faults_delayed=${f?.delayedPacket ?? 0}`;
}

const sumOf = (counts: Record<string, number>) => Object.values(counts).reduce((a, n) => a + n, 0);

/** The detail lines printed before the summary. */
export function formatDetails(
  v: SoakVerification,
  w: WorkerPoolStats,
  publishedDeliveries: number,
  broker: SoakOptions["broker"] = "pg-boss",
): string[] {
  const c = w.counters;
  const points = Object.entries(w.killPoints)
    .sort((a, b) => b[1] - a[1])
    .map(([where, n]) => `${n} ${where}`)
    .join("; ");
  return [
    `deliveries: ${v.brokerCompleted}/${publishedDeliveries} published deliveries completed by ${broker} (${v.brokerFailed} failed); ${c.runs} handler runs (${c.failed} failed and retried by ${broker}, ${c.retriedLater} in flight elsewhere and re-sent)`,
    `kills: ${w.kills} worker processes SIGKILLed and restarted, ${w.killedRuns} handler runs killed (${c.runs > 0 ? ((w.killedRuns / c.runs) * 100).toFixed(1) : "0"}% of runs); triggered ${points || "nowhere"}`,
    `steps: ${c.stepsRan} ran, ${c.stepsDuplicate} duplicates, ${c.stepsAbandoned} abandoned, ${c.stepsResumed} resumed after a takeover or failure; ${c.leaseLost} runs refused to complete over a successor (LeaseLostError)`,
    `orders=${v.orders} captures=${v.captures} paid=${v.paid} double_captures=${v.doubleCaptures} double_entries=${v.doubleEntries} charge_mismatches=${v.chargeMismatches} unpaid=${v.unpaid}`,
    `receipts=${v.receipts} double_receipts=${v.doubleReceipts} missing=${v.missingReceipts} abandoned_at_most_once=${v.abandonedReceipts} (of which sent before the crash: ${v.abandonedAfterSend}) missing_without_abandoned_step=${v.unexplainedMissingReceipts}`,
    `uncaught unique violations: ${JSON.stringify(c.violations)} seen by workers, ${c.injectedViolations} injected (${INJECTED_CONSTRAINT}); rollups: ${JSON.stringify(v.rolledUpViolations)}`,
    `violation keys: ${sumOf(c.violationKeys)} came back to handlers on ${Object.keys(c.violationKeys).length} keys, ${sumOf(v.recordedViolationKeys)} rows recorded on ${Object.keys(v.recordedViolationKeys).length} keys; ${w.killPoints["right after an uncaught violation"] ?? 0} workers SIGKILLed right after one; violations_lost=${violationsLost(c.violationKeys, v.recordedViolationKeys)}`,
  ];
}

/** The bookkeeping a SIGKILL may lose, against the handlers' ground truth (docs/soak.md). */
export function bookkeepingLoss(duplicateClaims: number, v: SoakVerification, w: WorkerPoolStats): BookkeepingLoss {
  return {
    duplicateClaims,
    suppressionsLost: Math.max(0, duplicateClaims - v.recordedSuppressions),
    duplicateCountsLost: Math.max(0, duplicateClaims - v.recordedDuplicateCounts),
    largestLossPerKill: w.unflushed.largestAtMost,
    unflushedAtMost: w.unflushed.atMost,
    unflushedAtLeast: w.unflushed.atLeast,
    unflushedAtStop: w.atStop.unflushedDuplicateClaims,
    killedAtStopDeadline: w.atStop.killedAtDeadline,
    droppedDuplicateCounts: w.droppedDuplicateCounts,
  };
}

/** The fault proxy's, the bookkeeping's and the memory's detail lines. */
export function formatFaultDetails(
  f: FaultCounts | null,
  b: BookkeepingLoss,
  memory: MemorySample[],
  lease: { leaseMs: number; stallMs: number },
): string[] {
  const lines: string[] = [];
  if (f) {
    lines.push(
      `faults: ${f.replyLost.commit} replies lost after COMMIT, ${f.replyLost.claim} after the one-statement claim, ${f.replyLost.complete} after the completion; ${f.resetInTransaction} connections reset inside a transaction; ${f.stalledReply} replies stalled ${lease.stallMs} ms (past the ${lease.leaseMs} ms lease); ${f.delayedPacket} packets delayed; ${f.connections} connections through the proxy`,
    );
  }
  lines.push(
    `bookkeeping (flushed every ${SOAK_FLUSH_INTERVAL_MS} ms): ${b.duplicateClaims} duplicate claims seen by handlers; suppressions_lost=${b.suppressionsLost} (rollups), duplicate_counts_lost=${b.duplicateCountsLost} (effects.duplicate_count); killed workers took ${b.unflushedAtLeast}–${b.unflushedAtMost} unflushed with them, at most ${b.largestLossPerKill} in one; the graceful stop left ${b.unflushedAtStop} unwritten and killed ${b.killedAtStopDeadline} workers at its deadline; ${b.droppedDuplicateCounts} duplicate counts found no effect row`,
  );
  if (memory.length > 0) {
    const first = memory[0]!;
    const last = memory.at(-1)!;
    const peak = memory.reduce((m, s) => Math.max(m, s.supervisorMb + s.workersMb), 0);
    lines.push(
      `memory (PSS, ${memory.length} samples every 30 s): supervisor ${first.supervisorMb}→${last.supervisorMb} MiB, workers ${first.workersMb}→${last.workersMb} MiB, PostgreSQL ${first.postgresMb}→${last.postgresMb} MiB; supervisor + workers peak ${peak} MiB`,
    );
  }
  return lines;
}

// Proportional set size: shared pages (PostgreSQL's shared buffers, above all) divided among the
// processes that map them, so the sum over processes is the memory they really hold together.
const pssMb = (pid: number): number => {
  try {
    const rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    const kb = /^Pss:\s+(\d+) kB/m.exec(rollup)?.[1];
    return kb ? Number(kb) / 1024 : 0;
  } catch {
    return 0;
  }
};

/**
 * PSS of the supervisor, the given worker pids and the soak's own embedded PostgreSQL (its
 * postmaster, found by its data directory, and that postmaster's children); Linux /proc only.
 */
export function sampleSoakMemory(workerPids: number[], atSeconds: number, serverDataDir?: string): MemorySample | null {
  if (!fs.existsSync("/proc/self/status")) return null;
  let postgres = 0;
  if (serverDataDir) {
    const procs: { pid: number; ppid: number; cmdline: string }[] = [];
    for (const entry of fs.readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (fs.readFileSync(`/proc/${entry}/comm`, "utf8").trim() !== "postgres") continue;
        const ppid = Number(/PPid:\s+(\d+)/.exec(fs.readFileSync(`/proc/${entry}/status`, "utf8"))?.[1] ?? 0);
        procs.push({ pid: Number(entry), ppid, cmdline: fs.readFileSync(`/proc/${entry}/cmdline`, "utf8") });
      } catch {
        // gone
      }
    }
    const postmaster = procs.find((p) => p.cmdline.includes(serverDataDir));
    if (postmaster) {
      for (const p of procs) if (p.pid === postmaster.pid || p.ppid === postmaster.pid) postgres += pssMb(p.pid);
    }
  }
  return {
    atSeconds: Math.round(atSeconds),
    supervisorMb: Math.round(pssMb(process.pid)),
    workersMb: Math.round(workerPids.reduce((sum, pid) => sum + pssMb(pid), 0)),
    postgresMb: Math.round(postgres),
  };
}
