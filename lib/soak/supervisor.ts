import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { loadConfig } from "../config";
import {
  addCounters,
  emptyCounters,
  type KillNote,
  type SoakWorkerConfig,
  type SupervisorMessage,
  type WorkerCounters,
  type WorkerMessage,
} from "./protocol";

const ROOT = path.resolve(import.meta.dirname, "../..");
const WORKER_ENTRY = path.join(import.meta.dirname, "worker-main.ts");
// Inside the repository so that the bundle's bare imports (pg, pg-boss, stripe…) resolve to its node_modules.
const BUNDLE_DIR = path.join(ROOT, "node_modules", ".cache", "onceboard-soak");

/**
 * The worker process as one JavaScript file (our TypeScript bundled, npm packages imported as
 * usual), run by plain node. Why: a worker started with `--import tsx` spent ~1.4 s of CPU
 * loading our modules through Node 20's off-thread loader hooks before it did any work, and the
 * soak restarts a worker at every kill (about one per 550 deliveries): a sixth of the soak's CPU.
 * Built once per pool (~0.1 s); the caller removes it.
 */
async function bundleWorker(entry: string): Promise<string> {
  fs.mkdirSync(BUNDLE_DIR, { recursive: true });
  const outfile = path.join(BUNDLE_DIR, `worker-${process.pid}-${Date.now().toString(36)}.mjs`);
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    logLevel: "error",
  });
  return outfile;
}

interface Slot {
  index: number;
  child?: ChildProcess;
  ready: boolean;
  armed: boolean;
  stopping: boolean;
}

export interface WorkerPoolStats {
  counters: WorkerCounters;
  /** SIGKILLs (each one a worker process). */
  kills: number;
  /** Handler runs that were in flight in a killed worker. */
  killedRuns: number;
  /** Where the arming run pulled the trigger, by kill point. */
  killPoints: Record<string, number>;
  /** Worker processes started again after a kill. */
  restarts: number;
  /** Exits nobody asked for (not a kill, not a stop): a worker crashed. */
  unexpectedExits: number;
  /** Duplicate claims the killed workers had not flushed (their kill notes), summed and the largest. */
  unflushed: { atMost: number; atLeast: number; largestAtMost: number };
  /**
   * The graceful stop at the end: duplicate claims the workers' last flushes could not write, and the
   * workers that had not exited by the stop's deadline and were SIGKILLed with whatever they held.
   * Both should be 0; neither is part of the SIGKILL bound above.
   */
  atStop: { unflushedDuplicateClaims: number; killedAtDeadline: number };
  /** Duplicate counts the library found no effect row for (idem_duplicate_counts_dropped_total), every worker process summed. */
  droppedDuplicateCounts: number;
}

export function emptyPoolStats(): WorkerPoolStats {
  return {
    counters: emptyCounters(),
    kills: 0,
    killedRuns: 0,
    killPoints: {},
    restarts: 0,
    unexpectedExits: 0,
    unflushed: { atMost: 0, atLeast: 0, largestAtMost: 0 },
    atStop: { unflushedDuplicateClaims: 0, killedAtDeadline: 0 },
    droppedDuplicateCounts: 0,
  };
}

/**
 * Runs the soak's worker processes and restarts each one the moment it dies, like a process
 * manager. A killed worker leaves a note (runs in flight, kill point, unreported counters) that
 * is folded into the totals.
 */
export async function startWorkerPool(options: {
  workers: number;
  config: Omit<SoakWorkerConfig, "index" | "noteFile">;
  noteDir: string;
  log: (line: string) => void;
  /** The worker process's entry module: the soak's own unless a test puts a misbehaving one in its place. */
  workerEntry?: string;
}) {
  const workerScript = await bundleWorker(options.workerEntry ?? WORKER_ENTRY);
  const stats = emptyPoolStats();
  const slots: Slot[] = Array.from({ length: options.workers }, (_, index) => ({
    index,
    ready: false,
    armed: false,
    stopping: false,
  }));
  let stopping = false;
  const noteFile = (i: number) => path.join(options.noteDir, `worker-${i}.kill.json`);

  const launch = (slot: Slot) => {
    const config: SoakWorkerConfig = { ...options.config, index: slot.index, noteFile: noteFile(slot.index) };
    fs.rmSync(config.noteFile, { force: true });
    // SOAK_WORKER_NODE_ARGS: extra node flags for the workers (e.g. --cpu-prof when tuning).
    const extra = loadConfig().SOAK_WORKER_NODE_ARGS.split(" ").filter(Boolean);
    const child = spawn(process.execPath, [...extra, workerScript], {
      cwd: ROOT,
      env: { ...process.env, ONCEBOARD_SOAK_WORKER: JSON.stringify(config) },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    slot.child = child;
    slot.ready = false;
    slot.armed = false;
    child.on("message", (m: WorkerMessage) => {
      if (m.type === "ready") slot.ready = true;
      else if (m.type === "progress") addCounters(stats.counters, m.counters);
      else if (m.type === "stopped") {
        stats.atStop.unflushedDuplicateClaims += m.unflushedDuplicateClaims;
        stats.droppedDuplicateCounts += m.droppedDuplicateCounts;
      }
    });
    child.on("exit", (code, signal) => {
      if (slot.child !== child) return;
      slot.child = undefined;
      slot.ready = false;
      slot.armed = false;
      let note: KillNote | undefined;
      try {
        note = JSON.parse(fs.readFileSync(noteFile(slot.index), "utf8")) as KillNote;
        fs.rmSync(noteFile(slot.index), { force: true });
      } catch {
        note = undefined;
      }
      if (note && signal === "SIGKILL") {
        stats.kills++;
        stats.killedRuns += note.inflight;
        stats.killPoints[note.where] = (stats.killPoints[note.where] ?? 0) + 1;
        addCounters(stats.counters, note.unreported);
        const u = note.unflushedDuplicateClaims;
        stats.unflushed.atMost += u.atMost;
        stats.unflushed.atLeast += u.atLeast;
        stats.unflushed.largestAtMost = Math.max(stats.unflushed.largestAtMost, u.atMost);
        stats.droppedDuplicateCounts += note.droppedDuplicateCounts;
      } else if (!stopping && !slot.stopping) {
        stats.unexpectedExits++;
        options.log(`worker ${slot.index} (pid ${child.pid}) exited unexpectedly (${signal ?? `code ${code}`})`);
      }
      if (stopping || slot.stopping) return;
      stats.restarts++;
      launch(slot);
    });
  };
  for (const slot of slots) launch(slot);

  const send = (slot: Slot, m: SupervisorMessage) => sendToWorker(slot.child, m);

  return {
    stats,
    /** True while every worker is up and none is armed. */
    calm: () => slots.every((s) => s.ready && !s.armed),
    readyCount: () => slots.filter((s) => s.ready).length,
    /** The worker processes' pids (for the memory samples). */
    pids: () => slots.flatMap((s) => (s.child?.pid ? [s.child.pid] : [])),
    /** Arms one worker at random: it SIGKILLs itself at the next kill point it draws. */
    arm() {
      const candidates = slots.filter((s) => s.ready && !s.armed);
      const slot = candidates[Math.floor(Math.random() * candidates.length)];
      if (!slot) return false;
      slot.armed = true;
      send(slot, { type: "arm" });
      return true;
    },
    async stop(timeoutMs = 60_000) {
      stopping = true;
      await Promise.all(
        slots.map(
          (slot) =>
            new Promise<void>((resolve) => {
              const child = slot.child;
              if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
              slot.stopping = true;
              const timer = setTimeout(() => {
                stats.atStop.killedAtDeadline++;
                options.log(
                  `worker ${slot.index} (pid ${child.pid}) had not stopped ${timeoutMs / 1000} s after it was asked to: SIGKILLed, losing what it had not flushed`,
                );
                child.kill("SIGKILL");
              }, timeoutMs);
              child.once("exit", () => {
                clearTimeout(timer);
                resolve();
              });
              send(slot, { type: "stop" });
            }),
        ),
      );
      fs.rmSync(workerScript, { force: true });
    },
  };
}

/**
 * Sends a message to a worker that may have died a moment ago. A worker SIGKILLs itself at its kill
 * points, so the supervisor can write to the channel after the process is gone and before Node has
 * seen its exit (`connected` is still true): without a callback that EPIPE is an 'error' event on
 * the ChildProcess, and with no listener it crashed the supervisor 11 minutes into a
 * million-delivery run. The callback takes it; the worker's exit handler restarts the slot.
 */
export function sendToWorker(child: ChildProcess | undefined, m: SupervisorMessage): void {
  if (!child?.connected) return;
  child.send(m, (error) => {
    if (error && child.connected) child.disconnect();
  });
}
