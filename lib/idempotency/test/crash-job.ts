import type { Effects } from "../index";
import { type AppHandle, appRows, appRun } from "./engines";
import { providerCapture } from "./helpers";

/** Where the crash test kills the worker: every boundary around and inside the three steps. */
export const BOUNDARIES = [
  "capture:claimed",
  "capture:sent",
  "capture:done",
  "mark-paid:written",
  "mark-paid:done",
  "receipt:claimed",
  "receipt:sent",
  "done",
] as const;
export type Boundary = (typeof BOUNDARIES)[number];

/**
 * The seed's three-effect job: charge (external, keyed at the provider), mark paid
 * (transactional), send a receipt (at most once; the fake mailer does not deduplicate).
 */
export function paidOrderJob(
  effects: Effects<unknown>,
  pool: AppHandle,
  orderId: string,
  at: (boundary: Boundary) => Promise<void> | void = () => {},
) {
  return effects.job({ tenant: "acme", jobType: "order.paid", messageId: `msg-${orderId}`, attempt: 1 }, async (job) => {
    const charge = await job.external(`capture:${orderId}`, async (c) => {
      await at("capture:claimed");
      const result = await providerCapture(pool, orderId, 1299, c.providerKey);
      await at("capture:sent");
      return result;
    });
    await at("capture:done");
    await job.transaction(`mark-paid:${orderId}`, async (tx) => {
      await appRun(
        tx as AppHandle,
        "UPDATE orders SET status = 'paid', paid_count = paid_count + 1, charge_id = $2 WHERE id = $1",
        [orderId, charge.id],
      );
      await at("mark-paid:written");
    });
    await at("mark-paid:done");
    await job.atMostOnce(`receipt:${orderId}`, async () => {
      await at("receipt:claimed");
      await appRun(pool, "INSERT INTO sent_mail (order_id, kind) VALUES ($1, 'receipt')", [orderId]);
      await at("receipt:sent");
    });
    await at("done");
  });
}

/** The obvious build: one status flag checked first. Used to show the crash harness can fail. */
export async function naivePaidOrderJob(
  pool: AppHandle,
  orderId: string,
  at: (boundary: Boundary) => Promise<void> | void = () => {},
) {
  const rows = await appRows<{ status: string }>(pool, "SELECT status FROM orders WHERE id = $1", [orderId]);
  if (rows[0]?.status === "paid") return;
  const charge = await providerCapture(pool, orderId, 1299, null);
  await at("capture:sent");
  await appRun(pool, "UPDATE orders SET status = 'paid', paid_count = paid_count + 1, charge_id = $2 WHERE id = $1", [
    orderId,
    charge.id,
  ]);
  await appRun(pool, "INSERT INTO sent_mail (order_id, kind) VALUES ($1, 'receipt')", [orderId]);
}
