/**
 * A BullMQ worker process that runs one job's effect and dies (SIGKILL) before the ack, so the
 * job is left active with a lock that expires: BullMQ's stalled-job check redelivers it.
 * Env: DATABASE_URL, REDIS_URL, QUEUE, PREFIX.
 */
import pg from "pg";
import pino from "pino";
import { Registry } from "prom-client";
import { createEffects } from "../../idempotency";
import { createIdempotentWorker, redisConnection } from "../bullmq";
import { type Capture, capture } from "./capture-ledger";

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};
const pool = new pg.Pool({ connectionString: env("DATABASE_URL"), max: 2 });
const effects = createEffects({
  db: pool,
  lease: "2s",
  wait: "100ms",
  registry: new Registry(),
  logger: pino({ level: "silent" }),
  rollups: false,
});
createIdempotentWorker<Capture, unknown>(env("QUEUE"), {
  effects,
  connection: redisConnection(env("REDIS_URL")),
  prefix: env("PREFIX"),
  workerOptions: { lockDuration: 1000, stalledInterval: 500 },
  handler: {
    kind: "once",
    tenant: (m) => m.tenant,
    key: (m) => `capture:${m.orderId}`,
    // Every run is a ledger row, so a second run would show.
    run: (m) => capture(pool, m),
  },
  onDecision: (decision) => {
    if (decision.action === "ack") {
      process.stdout.write("effect done; dying before the ack\n");
      process.kill(process.pid, "SIGKILL");
    }
  },
});
process.stdout.write("ready\n");
