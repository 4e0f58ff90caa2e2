import pg from "pg";
import pino from "pino";
import { createEffects, serveMetrics } from "../idempotency";
import { type DemoBrokerUrls, startDemoConsumers } from "./broker";
import { createFaults, demoHandlers } from "./handlers";
import { type DemoProviderEndpoints, demoProviderClients, demoProviderEndpointsFromEnv } from "./provider";
import { DEMO_APP_PREFIX, type DemoSettings, JOB_TYPES } from "./settings";
import { demoShopFor } from "./shop";

interface DemoWorker {
  metricsUrl: string;
  stop(): Promise<void>;
}

/**
 * One demo worker process: a consumer for every demo queue on the demo's broker (pg-boss, RabbitMQ
 * or NATS JetStream: lib/demo/broker.ts), each handler wrapped by the worker library (effects and
 * rollups marked), and /metrics on its own port. The effects and the shop's tables are in the
 * demo's PostgreSQL, or (settings.store mariadb) in MariaDB through the library's MySQL store; the
 * broker's (pg-boss) and the dead letters stay in PostgreSQL.
 */
export async function startDemoWorker(options: {
  url: string;
  index: number;
  metricsPort: number;
  settings: DemoSettings;
  /** RabbitMQ's and NATS's URLs, for settings.broker other than pg-boss. */
  brokerUrls?: DemoBrokerUrls;
  /** The demo's provider process (default: ONCEBOARD_DEMO_PROVIDER, as the supervisor sets it). */
  provider?: DemoProviderEndpoints;
  log?: (line: string) => void;
  logLevel?: string;
}): Promise<DemoWorker> {
  const { settings } = options;
  const log = options.log ?? (() => {});
  const name = `${DEMO_APP_PREFIX}-worker-${options.index}`;
  const pool = new pg.Pool({ connectionString: options.url, max: 8, application_name: name });
  pool.on("error", () => {});
  const shop = demoShopFor(settings.store, pool, { max: 8 });
  // Synchronous: the crash fault's line is written just before a SIGKILL, which an async buffer
  // would lose (and the supervisor would call the injected crash a real one). Warnings are few.
  const logger = pino({ name, level: options.logLevel ?? "warn" }, pino.destination({ dest: 1, sync: true }));
  const effects = createEffects({
    ...shop.effects,
    lease: settings.leaseMs,
    wait: settings.waitMs,
    retention: "7d",
    maxRetryWindow: "3d",
    // Every row the demo writes is marked, so demo:reset deletes exactly the demo's rows.
    marked: true,
    flushInterval: settings.rollupFlushMs,
    logger,
    workerId: `${name}:${process.pid}`,
    // The slot's name, the same after the supervisor restarts it: the console counts its restarts by it.
    workerName: name,
  });
  const metrics = await serveMetrics({ port: options.metricsPort, host: "127.0.0.1" });
  const faults = createFaults(settings, Math.random, (line) => logger.warn(line));
  const providers = demoProviderClients(options.provider ?? demoProviderEndpointsFromEnv());
  const consumers = await startDemoConsumers({
    settings,
    databaseUrl: options.url,
    brokerUrls: options.brokerUrls,
    name,
    pool,
    effects,
    handlers: (publisher) => demoHandlers(shop, faults, providers, (queue, message) => publisher.send(queue, message)),
    onError: (error) => logger.warn({ err: error }, `${settings.broker} error`),
  });
  log(
    `demo worker ${options.index} (pid ${process.pid}) consuming ${Object.values(JOB_TYPES).join(", ")} on ${settings.broker}; metrics at ${metrics.url}`,
  );
  let stopped = false;
  return {
    metricsUrl: metrics.url,
    async stop() {
      if (stopped) return;
      stopped = true;
      await consumers.stop().catch(() => {});
      await effects.close().catch(() => {});
      await metrics.close().catch(() => {});
      await shop.close();
      await pool.end().catch(() => {});
    },
  };
}
