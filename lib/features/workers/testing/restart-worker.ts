import pg from "pg";
import { createEffects, serveMetrics } from "../../../idempotency";

/**
 * A worker process for lib/features/workers/worker-restarts.test.ts, given `<database url>
 * <worker name> <metrics port>`: the worker library registered under that name (which records this
 * start in worker_starts), its /metrics on that port (the same port every time, as the demo's
 * supervisor gives a restarted slot), "ready" on stdout, then nothing until it is killed.
 */
const [databaseUrl, workerName, port] = process.argv.slice(2);
const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
pool.on("error", () => {});
const effects = createEffects({
  db: pool,
  workerName,
  rollups: false,
  timeline: false,
  flushInterval: 0,
});
await effects.ready();
await serveMetrics({ port: Number(port), host: "127.0.0.1" });
process.stdout.write("ready\n");
setInterval(() => {}, 60_000);
