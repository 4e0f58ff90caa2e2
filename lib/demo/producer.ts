import { randomBytes, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { formatCountOf } from "../format";
import { type DemoBrokerUrls, openDemoPublisher, setupDemoBroker } from "./broker";
import { COMBINED_ORDER_SHARE, DEMO_APP_PREFIX, DEMO_TENANTS, type DemoSettings, JOB_TYPES, type OrderMessage } from "./settings";
import { demoShopFor, type ShopStatement } from "./shop";

/** The producer's statements on the shop's orders (lib/demo/shop.ts: PostgreSQL or MariaDB). */
const NEW_ORDER: ShopStatement = {
  pg: "INSERT INTO demo_orders (tenant_id, order_id, amount_cents) VALUES ($1, $2, $3)",
  mysql: "INSERT INTO demo_orders (tenant_id, order_id, amount_cents) VALUES ($1, $2, $3)",
};
const REFUND_WANTED: ShopStatement = {
  pg: "UPDATE demo_orders SET refund_wanted = true WHERE tenant_id = $1 AND order_id = $2",
  mysql: "UPDATE demo_orders SET refund_wanted = TRUE WHERE tenant_id = $1 AND order_id = $2",
};
const LAST_PAID: ShopStatement = {
  pg: "SELECT tenant_id, order_id, amount_cents FROM demo_orders WHERE paid_at IS NOT NULL ORDER BY paid_at DESC LIMIT 1",
  mysql: "SELECT tenant_id, order_id, amount_cents FROM demo_orders WHERE paid_at IS NOT NULL ORDER BY paid_at DESC LIMIT 1",
};

interface ProducerStats {
  orders: number;
  concurrentDuplicates: number;
  republishes: number;
  parkedForReplay: number;
  lateReplays: number;
  keyReuse: number;
  refunds: number;
}

interface DemoProducer {
  stats: ProducerStats;
  stop(): Promise<void>;
}

/**
 * Publishes new orders at `settings.rate` per second and injects duplicates the way production
 * does: the same message twice at once, the same fact re-published later with a new message id,
 * copies parked in the dead-letter table and replayed minutes later, and now and then a buggy
 * re-use of a capture key with a different amount (which the adapters dead-letter).
 */
export async function startDemoProducer(options: {
  url: string;
  settings: DemoSettings;
  /** RabbitMQ's and NATS's URLs, for settings.broker other than pg-boss. */
  brokerUrls?: DemoBrokerUrls;
  log?: (line: string) => void;
  random?: () => number;
  /** Progress line interval; 0 for none. */
  reportEveryMs?: number;
}): Promise<DemoProducer> {
  const { settings } = options;
  const random = options.random ?? Math.random;
  const log = options.log ?? (() => {});
  const pool = new pg.Pool({ connectionString: options.url, max: 3, application_name: `${DEMO_APP_PREFIX}-producer` });
  pool.on("error", () => {});
  // The orders are the shop's (PostgreSQL or MariaDB); the parked dead letters stay in PostgreSQL.
  const shop = demoShopFor(settings.store, pool, { max: 2 });
  await setupDemoBroker(settings, options.url, options.brokerUrls);
  const broker = await openDemoPublisher(settings, options.url, `${DEMO_APP_PREFIX}-producer`, options.brokerUrls);
  const stats: ProducerStats = {
    orders: 0,
    concurrentDuplicates: 0,
    republishes: 0,
    parkedForReplay: 0,
    lateReplays: 0,
    keyReuse: 0,
    refunds: 0,
  };

  const between = (lo: number, hi: number) => lo + random() * (hi - lo);

  async function createOrder(): Promise<void> {
    const tenant = DEMO_TENANTS[Math.floor(random() * DEMO_TENANTS.length)]!;
    const orderId = `ord-${Date.now().toString(36)}-${randomBytes(3).toString("hex")}`;
    const amountCents = 500 + Math.floor(random() * 19_500);
    await shop.run(NEW_ORDER, [tenant, orderId, amountCents]);
    const queue = random() < COMBINED_ORDER_SHARE ? JOB_TYPES.paid : JOB_TYPES.capture;
    const message: OrderMessage = {
      tenant,
      orderId,
      amountCents,
      msgId: randomUUID(),
      publishedAt: new Date().toISOString(),
      origin: "first",
    };
    if (random() < settings.concurrentDuplicates) {
      // Two copies of one message in one insert: two workers can fetch them at the same moment.
      await broker.sendTogether(queue, [message, { ...message, origin: "duplicate" }]);
      stats.concurrentDuplicates++;
    } else {
      await broker.send(queue, message);
    }
    stats.orders++;
    if (random() < settings.republishes) {
      const again = { ...message, msgId: randomUUID(), publishedAt: new Date().toISOString(), origin: "republish" };
      await broker.send(queue, again, { delaySeconds: Math.round(between(2, 20)) });
      stats.republishes++;
    }
    if (random() < settings.lateReplays) {
      const seconds = between(
        settings.lateReplayMinSeconds,
        Math.max(settings.lateReplayMinSeconds, settings.lateReplayMaxSeconds),
      );
      await pool.query(
        `INSERT INTO demo_dead_letters (queue, data, reason, replay_after)
         VALUES ($1, $2, 'parked by the demo producer: replayed late, as an operator replays a dead-letter queue',
                 now() + $3 * interval '1 second')`,
        [queue, { ...message, origin: "late-replay" }, seconds],
      );
      stats.parkedForReplay++;
    }
    if (random() < settings.refunds) {
      await shop.run(REFUND_WANTED, [tenant, orderId]);
      const refund = { ...message, msgId: randomUUID(), origin: "refund" };
      await broker.send(JOB_TYPES.refund, refund, { delaySeconds: Math.round(between(10, 30)) });
      stats.refunds++;
    }
    if (random() < settings.keyReuse) await reuseKey();
  }

  // A buggy producer: an already paid order's capture re-sent with a different amount. The key
  // names one business fact, so the library refuses it (key reuse) and the adapter dead-letters it.
  async function reuseKey(): Promise<void> {
    const rows = await shop.rows<{ tenant_id: string; order_id: string; amount_cents: number }>(LAST_PAID);
    const order = rows[0];
    if (!order) return;
    const message: OrderMessage = {
      tenant: order.tenant_id,
      orderId: order.order_id,
      amountCents: order.amount_cents + 100,
      msgId: randomUUID(),
      publishedAt: new Date().toISOString(),
      origin: "key-reuse",
    };
    await broker.send(JOB_TYPES.capture, message);
    stats.keyReuse++;
  }

  // Parked copies whose time has come go back on their queue with their original message id.
  // SKIP LOCKED so two producers would not replay one row twice (the effects would dedupe anyway).
  async function replayDue(): Promise<void> {
    const { rows } = await pool.query<{ queue: string; data: OrderMessage }>(
      `UPDATE demo_dead_letters SET replayed_at = now()
        WHERE id IN (SELECT id FROM demo_dead_letters
                      WHERE replayed_at IS NULL AND replay_after <= now()
                      ORDER BY replay_after LIMIT 20 FOR UPDATE SKIP LOCKED)
        RETURNING queue, data`,
    );
    for (const row of rows) {
      await broker.send(row.queue, row.data);
      stats.lateReplays++;
    }
  }

  let stopped = false;
  let owed = 0;
  let last = Date.now();
  let lastReport = Date.now();
  const reportEveryMs = options.reportEveryMs ?? 60_000;
  const loop = (async () => {
    while (!stopped) {
      const now = Date.now();
      owed = Math.min(owed + ((now - last) / 1000) * settings.rate, settings.rate * 5);
      last = now;
      try {
        while (owed >= 1 && !stopped) {
          owed -= 1;
          await createOrder();
        }
        await replayDue();
      } catch (error) {
        log(`demo producer: ${error instanceof Error ? error.message : String(error)} (continuing)`);
      }
      if (reportEveryMs > 0 && now - lastReport >= reportEveryMs) {
        lastReport = now;
        log(
          `demo producer: ${formatCountOf(stats.orders, "order")}, ${formatCountOf(stats.concurrentDuplicates, "concurrent duplicate")}, ${formatCountOf(stats.republishes, "re-publish", "re-publishes")}, ${formatCountOf(stats.lateReplays, "late replay")}, ${formatCountOf(stats.keyReuse, "key reuse")}`,
        );
      }
      await sleep(200);
    }
  })();

  return {
    stats,
    async stop() {
      stopped = true;
      await loop;
      await broker.close();
      await shop.close();
      await pool.end().catch(() => {});
    },
  };
}
