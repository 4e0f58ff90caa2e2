import { z } from "zod";

/** The three demo tenants. */
export const DEMO_TENANTS = ["acme", "globex", "initech"] as const;

/** pg-boss keeps the demo's queues in a schema of their own, so demo:reset can drop it whole. */
export const DEMO_BOSS_SCHEMA = "pgboss_demo";

/** application_name of every demo connection: demo:reset refuses while one is open. */
export const DEMO_APP_PREFIX = "onceboard-demo";

/** The demo's job types; each is a pg-boss queue of the same name. */
export const JOB_TYPES = {
  /** capture → mark paid → receipt in one job: a retry resumes at the first step not yet done. */
  paid: "order.paid",
  /** The same pipeline split into three chained jobs. */
  capture: "order.capture",
  markPaid: "order.mark_paid",
  receipt: "order.receipt",
  refund: "order.refund",
} as const;
export type DemoJobType = (typeof JOB_TYPES)[keyof typeof JOB_TYPES];

/** The share of orders the producer publishes as one order.paid job (the rest: order.capture, then its chained jobs). */
export const COMBINED_ORDER_SHARE = 0.6;
export const ALL_JOB_TYPES: DemoJobType[] = Object.values(JOB_TYPES);

const rate = z.coerce.number().min(0).max(1);

/**
 * Where the shop's tables and the worker library's effects are (lib/demo/shop.ts): the demo's
 * PostgreSQL, or MariaDB / MySQL through the library's MySQL store.
 */
export const DEMO_STORES = ["postgres", "mariadb"] as const;
export type DemoStore = (typeof DEMO_STORES)[number];

/**
 * Everything the demo's producer and workers can be tuned with. Each fault is a probability per
 * opportunity (per job for the worker faults, per order for the producer's duplicates).
 */
export const demoSettingsSchema = z.object({
  /** The broker the demo's jobs go through (`npm start -- --broker`; lib/demo/broker.ts). */
  broker: z.enum(["pg-boss", "bullmq", "rabbitmq", "nats"]).default("pg-boss"),
  /** The effects store and the shop's tables (`npm start -- --store`): postgres, or mariadb at MARIADB_URL. */
  store: z.enum(DEMO_STORES).default("postgres"),
  /** New orders per second across all tenants. */
  rate: z.coerce.number().min(0.1).max(200).default(2),
  workers: z.coerce.number().int().min(1).max(8).default(2),
  /** pg-boss pollers per queue per worker process (RabbitMQ: prefetch; JetStream: deliveries at once). */
  pollers: z.coerce.number().int().min(1).max(8).default(2),
  /** The same message delivered twice at once (a broker's at-least-once duplicate). */
  concurrentDuplicates: rate.default(0.2),
  /** The same business fact re-published later with a new message id. */
  republishes: rate.default(0.15),
  /** A copy parked in the dead-letter table and replayed minutes later. */
  lateReplays: rate.default(0.04),
  lateReplayMinSeconds: z.coerce.number().min(1).default(45),
  lateReplayMaxSeconds: z.coerce.number().min(1).default(240),
  /** A buggy producer re-using an order's capture key with a different amount (dead-lettered). */
  keyReuse: rate.default(0.005),
  /** Orders that are refunded a little later. */
  refunds: rate.default(0.08),
  /** Fault: the worker process exits right after charging, before the claim completes. */
  crash: rate.default(0.004),
  /** Fault: a handler sleeps past its lease and the broker's timeout; the broker retries it. */
  slow: rate.default(0.01),
  /** Fault: mark-paid inserts its accounting entry twice (an uncaught unique violation). */
  violation: rate.default(0.02),
  /** Effect lease; the slow fault outlives it. */
  leaseMs: z.coerce.number().int().min(500).default(5000),
  /** pg-boss expiry of an active job: the broker retries a job active this long. */
  expireInSeconds: z.coerce.number().int().min(1).default(8),
  /** How long the slow fault sleeps. */
  slowMs: z.coerce.number().int().min(0).default(11_000),
  /** How long a duplicate waits for an in-flight effect before being retried later. */
  waitMs: z.coerce.number().int().min(0).default(1000),
  retryDelaySeconds: z.coerce.number().int().min(1).default(2),
  maintenanceIntervalSeconds: z.coerce.number().int().min(1).default(5),
  /**
   * The demo's provider process: its Stripe-compatible server's and its mailer's ports (0: any
   * free port; npm start prints the ones taken), and the disagreements the Stripe-compatible
   * server plants per request, which the reconciler must then find (npm run demo:verify compares).
   */
  providerPort: z.coerce.number().int().min(0).max(65_535).default(0),
  mailerPort: z.coerce.number().int().min(0).max(65_535).default(0),
  /** A second object for one key (the provider forgot or did not check it): duplicated at provider. */
  providerDuplicate: rate.default(0.005),
  /** Accepted, never kept: missing at provider. */
  providerLost: rate.default(0.005),
  /** Kept without its Onceboard metadata: unknown to Onceboard (and its effect missing at provider). */
  providerKeyless: rate.default(0.005),
  /** Kept with another amount: drift. */
  providerDrift: rate.default(0.005),
  rollupFlushMs: z.coerce.number().int().min(200).default(5000),
});
export type DemoSettings = z.infer<typeof demoSettingsSchema>;

/** DEMO_RATE, DEMO_CRASH, … override the defaults (DEMO_ + the setting in upper snake case). */
export function demoSettingsFromEnv(env: NodeJS.ProcessEnv = process.env, overrides: Partial<DemoSettings> = {}): DemoSettings {
  const raw: Record<string, unknown> = {};
  for (const name of Object.keys(demoSettingsSchema.shape)) {
    const value = env[`DEMO_${name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`];
    if (value !== undefined && value !== "") raw[name] = value;
  }
  const parsed = demoSettingsSchema.safeParse({ ...raw, ...overrides });
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (i) =>
        `DEMO_${String(i.path[0])
          .replace(/[A-Z]/g, (c) => `_${c}`)
          .toUpperCase()} ${i.message}`,
    );
    throw new Error(`invalid demo setting: ${problems.join("; ")}`);
  }
  return parsed.data;
}

/** A message on any demo queue. `msgId` is the logical message id: a broker duplicate keeps it, a re-publish gets a new one. */
export interface OrderMessage {
  tenant: string;
  orderId: string;
  amountCents: number;
  msgId: string;
  publishedAt: string;
  /** Set on order.mark_paid / order.receipt: the capture's charge id. */
  chargeId?: string;
  /** Why this copy exists (first, duplicate, republish, late-replay, key-reuse, chained). */
  origin?: string;
}

/** "14d", "36h", "90m" → milliseconds; anything else → a clear error. */
export function parseSpan(value: string, flag: string): number {
  const match = /^(\d+)(d|h|m)$/.exec(value.trim());
  if (!match) throw new Error(`${flag} must look like 14d, 36h or 90m (got ${JSON.stringify(value)})`);
  const n = Number(match[1]);
  const unit = match[2] === "d" ? 86_400_000 : match[2] === "h" ? 3_600_000 : 60_000;
  const ms = n * unit;
  if (ms <= 0 || ms > 90 * 86_400_000) throw new Error(`${flag} must be between 1m and 90d (got ${value})`);
  return ms;
}

/** Settings handed to a demo child process (ONCEBOARD_DEMO_SETTINGS), else DEMO_* variables. */
export function demoSettingsForChild(env: NodeJS.ProcessEnv = process.env): DemoSettings {
  const json = env.ONCEBOARD_DEMO_SETTINGS;
  if (json) return demoSettingsSchema.parse(JSON.parse(json));
  return demoSettingsFromEnv(env);
}
