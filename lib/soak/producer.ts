import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { DEMO_TENANTS, type OrderMessage } from "../demo/settings";
import type { Shop } from "../demo/shop";
import type { SoakPublisher } from "./brokers";

/** How the deliveries split: every order once, plus duplicates of three kinds. */
export interface SoakPlan {
  deliveries: number;
  orders: number;
  /** The same message (same message id) published twice in one insert, ids adjacent: fetched together. */
  concurrent: number;
  /** The same order re-published with a new message id, soon after the first. */
  republished: number;
  /** The same message replayed long after the first was processed (a dead-letter replay). */
  late: number;
}

export function planDeliveries(deliveries: number, duplicateShare: number): SoakPlan {
  const duplicates = Math.round(deliveries * duplicateShare);
  const republished = Math.floor(duplicates / 3);
  const late = Math.floor(duplicates / 3);
  return { deliveries, orders: deliveries - duplicates, concurrent: duplicates - republished - late, republished, late };
}

interface ProducerProgress {
  published: number;
  orders: number;
  concurrent: number;
  republished: number;
  late: number;
}

interface Pending {
  due: number;
  order: number;
  kind: "republish" | "late";
}

const tenantOf = (i: number) => DEMO_TENANTS[i % DEMO_TENANTS.length]!;
const amountOf = (i: number) => 500 + ((i * 7919) % 19_500);
const orderIdOf = (i: number) => `soak-${i}`;

/** A uuid that sorts right after `id` in pg-boss's ORDER BY created_on, id (last hex digit bumped). */
function adjacent(id: string): string {
  const last = Number.parseInt(id.at(-1)!, 16);
  return `${id.slice(0, -1)}${((last + 1) % 16).toString(16)}`;
}

/**
 * Publishes the soak's deliveries in batches, never more than `window` ahead of what the workers
 * have finished. Every job carries an explicit id and orders are inserted with ON CONFLICT DO
 * NOTHING (ON DUPLICATE KEY on MariaDB), so a batch retried after the database went away
 * mid-insert is published once. The orders go to the shop's tables (`shop`: PostgreSQL or MariaDB).
 */
export function createProducer(options: {
  shop: Shop;
  broker: Pick<SoakPublisher, "publish">;
  plan: SoakPlan;
  window: number;
  batch: number;
  random?: () => number;
}) {
  const { plan, shop, broker, window } = options;
  const random = options.random ?? Math.random;
  const randint = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  // Each order's concurrent copies; republish / late copies wait in `later` for their turn.
  const concurrentCopies = new Uint8Array(plan.orders);
  for (let k = 0; k < plan.concurrent; k++) {
    const j = randint(0, plan.orders - 1);
    if (concurrentCopies[j]! < 255) concurrentCopies[j]!++;
    else k--;
  }
  const later: Pending[] = [];
  for (let k = 0; k < plan.republished; k++) {
    const j = randint(0, plan.orders - 1);
    later.push({ order: j, kind: "republish", due: j + randint(0, options.batch * 2) });
  }
  for (let k = 0; k < plan.late; k++) {
    const j = randint(0, plan.orders - 1);
    later.push({ order: j, kind: "late", due: j + randint(window * 4, window * 12) });
  }
  later.sort((a, b) => a.due - b.due);
  const publishedAt = new Array<string | undefined>(plan.orders);
  const msgIdOf = (i: number) => `m-${i}`;
  const progress: ProducerProgress = { published: 0, orders: 0, concurrent: 0, republished: 0, late: 0 };
  let next = 0; // next order to publish
  let nextLater = 0;

  const original = (i: number): OrderMessage => ({
    tenant: tenantOf(i),
    orderId: orderIdOf(i),
    amountCents: amountOf(i),
    msgId: msgIdOf(i),
    publishedAt: publishedAt[i]!,
    origin: "first",
  });

  async function publish(jobs: { id: string; data: OrderMessage }[], newOrders: number[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        if (newOrders.length > 0) {
          await shop.run(
            {
              pg: `INSERT INTO demo_orders (tenant_id, order_id, amount_cents)
                   SELECT * FROM unnest($1::text[], $2::text[], $3::int[]) ON CONFLICT DO NOTHING`,
              mysql: `INSERT INTO demo_orders (tenant_id, order_id, amount_cents) VALUES ${newOrders.map(() => "(?, ?, ?)").join(", ")}
                      ON DUPLICATE KEY UPDATE tenant_id = tenant_id`,
            },
            shop.store === "postgres"
              ? [newOrders.map(tenantOf), newOrders.map(orderIdOf), newOrders.map(amountOf)]
              : newOrders.flatMap((i) => [tenantOf(i), orderIdOf(i), amountOf(i)]),
          );
        }
        if (jobs.length > 0) await broker.publish(jobs);
        return;
      } catch (error) {
        // The database is restarting: the same batch again (ids make it exactly once).
        if (attempt >= 60) throw error;
        await sleep(500);
      }
    }
  }

  /** Publishes the next batch if the backlog allows; false when there is nothing left to publish. */
  async function step(done: number, drained: boolean): Promise<boolean> {
    if (progress.published >= plan.deliveries) return false;
    if (progress.published - done >= window) return true;
    const jobs: { id: string; data: OrderMessage }[] = [];
    const newOrders: number[] = [];
    const now = new Date().toISOString();
    const end = Math.min(plan.orders, next + options.batch);
    for (; next < end; next++) {
      publishedAt[next] = now;
      newOrders.push(next);
      const m = original(next);
      const id = randomUUID();
      jobs.push({ id, data: m });
      let copyId: string = id;
      for (let c = 0; c < concurrentCopies[next]!; c++) {
        copyId = adjacent(copyId);
        jobs.push({ id: copyId, data: { ...m, origin: "duplicate" } });
        progress.concurrent++;
      }
    }
    progress.orders = next;
    // Copies whose time has come; late ones not due before the last order wait until the
    // originals are drained, so that they really arrive after the first delivery finished.
    const allOrdersOut = next >= plan.orders;
    while (nextLater < later.length) {
      const p = later[nextLater]!;
      const due = p.due < next && p.order < next;
      const tail = allOrdersOut && (p.kind === "republish" || drained);
      if (!due && !tail) break;
      if (jobs.length >= options.batch * 3) break;
      nextLater++;
      const m = original(p.order);
      if (p.kind === "republish") {
        jobs.push({
          id: randomUUID(),
          data: { ...m, msgId: `${m.msgId}-r${nextLater}`, publishedAt: now, origin: "republish" },
        });
        progress.republished++;
      } else {
        jobs.push({ id: randomUUID(), data: { ...m, origin: "late-replay" } });
        progress.late++;
      }
    }
    await publish(jobs, newOrders);
    progress.published += jobs.length;
    return true;
  }

  return { progress, step };
}
