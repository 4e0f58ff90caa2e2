import pg from "pg";
import { createEffects, serveMetrics } from "../../../idempotency";

/**
 * A worker process for lib/features/workers/worker-restarts.test.ts: the worker library registered
 * under RESTART_WORKER_NAME (which records this start in worker_starts), its /metrics on
 * RESTART_WORKER_PORT (the same port every time, as the demo's supervisor gives a restarted slot),
 * "ready" on stdout, then nothing until it is killed.
 */
const pool = new pg.Pool({ connectionString: process.env.RESTART_WORKER_DATABASE_URL, max: 2 });
pool.on("error", () => {});
const effects = createEffects({
  db: pool,
  workerName: process.env.RESTART_WORKER_NAME,
  rollups: false,
  timeline: false,
  flushInterval: 0,
});
await effects.ready();
await serveMetrics({ port: Number(process.env.RESTART_WORKER_PORT), host: "127.0.0.1" });
process.stdout.write("ready\n");
setInterval(() => {}, 60_000);
