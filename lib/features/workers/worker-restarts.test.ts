import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../../test/database";
import { findFreePort } from "../../db/free-port";
import { getWorkers } from "./get-workers";

/**
 * Restarts are counted where they happen: each worker process records its own start when it
 * registers (worker_starts), so a worker killed while no console page was open (no scrape at all)
 * still shows its restarts the first time the Workers panel is read.
 */
const ROOT = path.resolve(import.meta.dirname, "../../..");
const WORKER = path.join(import.meta.dirname, "testing", "restart-worker.ts");
const NAME = "restart-test-worker-0";

let db: TestDatabase;
let port: number;
const children: ChildProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 2 });
  port = await findFreePort();
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await db?.drop();
});

/** Starts the worker as its own process and waits until it has registered and serves /metrics. */
async function startWorker(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", WORKER, db.url, NAME, String(port)], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  let out = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", () => {
      if (out.includes("ready\n")) resolve();
    });
    child.once("exit", (code, signal) => reject(new Error(`the worker exited before it was ready (${signal ?? code})`)));
  });
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

describe("a worker's restarts", () => {
  it("are counted from the starts the workers recorded: three kills with no console looking show 3", async () => {
    const env = { WORKER_METRICS_URLS: `http://127.0.0.1:${port}/metrics` };
    // The first process, then three killed and started again, as a supervisor restarts a crashed slot.
    let worker = await startWorker();
    for (let k = 0; k < 3; k++) {
      await kill(worker);
      worker = await startWorker();
    }
    // The console's first look, after all of it.
    const [status] = (await getWorkers({ env, db: db.pool })).workers;
    const { rows: starts } = await db.pool.query("SELECT process_started_at, pid FROM onceboard.worker_starts ORDER BY 1");
    expect(status, `the starts recorded: ${JSON.stringify(starts)}`).toMatchObject({ up: true, workerName: NAME, restarts: 3 });

    // A kill while down counts once it is back; a worker that has not restarted since is not counted again.
    await kill(worker);
    const down = (await getWorkers({ env, db: db.pool })).workers[0];
    expect(down).toMatchObject({ up: false, workerName: NAME, restarts: 3 });
    worker = await startWorker();
    expect((await getWorkers({ env, db: db.pool })).workers[0]).toMatchObject({ up: true, restarts: 4 });

    // Outside the hour, the same starts are not restarts of the last hour.
    const later = new Date(Date.now() + 2 * 3_600_000);
    expect((await getWorkers({ env, db: db.pool, now: later })).workers[0]).toMatchObject({ restarts: 0 });
    await kill(worker);
  });

  it("are unknown, not zero, for a worker whose /metrics names no worker", async () => {
    const closed = await findFreePort();
    const [status] = (await getWorkers({ env: { WORKER_METRICS_URLS: `http://127.0.0.1:${closed}/metrics` }, db: db.pool }))
      .workers;
    expect(status).toMatchObject({ up: false, workerName: null, restarts: null });
  });
});
