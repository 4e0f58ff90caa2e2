import pg from "pg";
import pino from "pino";
import { createEffects, serveMetrics } from "../idempotency";
import { startBoss, workIdempotent } from "../queues/pgboss";
import { createDemoQueues, createFaults, demoHandlers } from "./handlers";
import { type DemoProviderEndpoints, demoProviderClients, demoProviderEndpointsFromEnv } from "./provider";
import { DEMO_APP_PREFIX, DEMO_BOSS_SCHEMA, type DemoSettings, JOB_TYPES, type OrderMessage } from "./settings";

interface DemoWorker {
  metricsUrl: string;
  stop(): Promise<void>;
}

/**
 * One demo worker process: a pg-boss consumer for every demo queue, each handler wrapped by the
 * worker library (effects and rollups marked), and /metrics on its own port.
 */
export async function startDemoWorker(options: {
  url: string;
  index: number;
  metricsPort: number;
  settings: DemoSettings;
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
  // Synchronous: the crash fault's line is written just before a SIGKILL, which an async buffer
  // would lose (and the supervisor would call the injected crash a real one). Warnings are few.
  const logger = pino({ name, level: options.logLevel ?? "warn" }, pino.destination({ dest: 1, sync: true }));
  const effects = createEffects({
    db: pool,
    lease: settings.leaseMs,
    wait: settings.waitMs,
    retention: "7d",
    maxRetryWindow: "3d",
    // Every row the demo writes is marked, so demo:reset deletes exactly the demo's rows.
    marked: true,
    flushInterval: settings.rollupFlushMs,
    logger,
    workerId: `${name}:${process.pid}`,
  });
  const metrics = await serveMetrics({ port: options.metricsPort, host: "127.0.0.1" });
  const boss = await startBoss({
    connectionString: options.url,
    schema: DEMO_BOSS_SCHEMA,
    application_name: `${name}-boss`,
    max: 4,
    maintenanceIntervalSeconds: settings.maintenanceIntervalSeconds,
    monitorStateIntervalSeconds: 60,
    onError: (error) => logger.warn({ err: error }, "pg-boss error"),
  });
  await createDemoQueues(boss, settings);
  const faults = createFaults(settings, Math.random, (line) => logger.warn(line));
  const providers = demoProviderClients(options.provider ?? demoProviderEndpointsFromEnv());
  const handlers = demoHandlers(pool, faults, providers, (queue, message) => boss.send(queue, message));
  for (const [queue, handler] of Object.entries(handlers)) {
    await workIdempotent<OrderMessage, unknown>(boss, queue, {
      effects,
      handler,
      concurrency: settings.pollers,
      pollingIntervalSeconds: 1,
      // The logical message id travels in the message: a broker duplicate keeps it, a re-publish
      // gets a new one. pg-boss gives each copy its own job id.
      messageId: (data) => data.msgId,
      publishedAt: (data) => new Date(data.publishedAt),
      onDeadLetter: async ({ queue: q, data, reason }) => {
        await pool.query("INSERT INTO demo_dead_letters (queue, data, reason) VALUES ($1, $2, $3)", [q, data, reason]);
      },
    });
  }
  log(
    `demo worker ${options.index} (pid ${process.pid}) consuming ${Object.values(JOB_TYPES).join(", ")}; metrics at ${metrics.url}`,
  );
  let stopped = false;
  return {
    metricsUrl: metrics.url,
    async stop() {
      if (stopped) return;
      stopped = true;
      await boss.stop({ graceful: true, wait: true, timeout: 5000 }).catch(() => {});
      await effects.close().catch(() => {});
      await metrics.close().catch(() => {});
      await pool.end().catch(() => {});
    },
  };
}
