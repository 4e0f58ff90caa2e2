/**
 * A RabbitMQ or NATS worker process that runs one message's effect and dies (SIGKILL) before the
 * ack, so the broker still holds the delivery unacked: RabbitMQ requeues it when the connection
 * drops, JetStream after AckWait. Env: BROKER (rabbitmq | nats), DATABASE_URL; RABBITMQ_URL and
 * QUEUE, or NATS_URL, STREAM and DURABLE.
 */
import pg from "pg";
import pino from "pino";
import { Registry } from "prom-client";
import { createEffects } from "../../idempotency";
import type { Decision, IdempotentHandler } from "../deliveries";
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
const handler: IdempotentHandler<Capture, unknown> = {
  kind: "once",
  tenant: (m) => m.tenant,
  key: (m) => `capture:${m.orderId}`,
  // Every run is a ledger row, so a second run would show.
  run: (m) => capture(pool, m),
};
const onDecision = (decision: Decision<unknown>) => {
  if (decision.action === "ack") {
    process.stdout.write("effect done; dying before the ack\n");
    process.kill(process.pid, "SIGKILL");
  }
};

if (env("BROKER") === "rabbitmq") {
  const { consumeIdempotent } = await import("../rabbitmq");
  await consumeIdempotent<Capture, unknown>({
    effects,
    handler,
    onDecision,
    url: env("RABBITMQ_URL"),
    queue: env("QUEUE"),
    prefetch: 1,
  });
} else {
  const { consumeIdempotent, natsConnection } = await import("../nats");
  const connection = await natsConnection(env("NATS_URL"));
  await consumeIdempotent<Capture, unknown>({
    effects,
    handler,
    onDecision,
    connection,
    stream: env("STREAM"),
    durable: env("DURABLE"),
    concurrency: 1,
  });
}
process.stdout.write("ready\n");
