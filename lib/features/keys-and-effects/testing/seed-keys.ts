import type { Queryable } from "../../../db/types";
import { seedDeliveries } from "./seed-deliveries";

/** How far back the Keys seed sits: older than the Overview's longest window (7 d), so its counts stay as seeded. */
export const KEYS_SEED_DAYS_BACK = 10;

/** The order whose steps the Keys tests look up, in two tenants (the same keys in globex must never show up for acme). */
export const KEYS_SEED = {
  tenant: "acme",
  otherTenant: "globex",
  orderId: "ord-e2e-4711",
  messageId: "msg-e2e-4711",
  card: "4111 1111 1111 1111",
  email: "ada@example.com",
  /** A capture whose first worker died mid-claim: taken over by another (attempt 2), then a late duplicate. */
  takeoverKey: "capture:ord-e2e-takeover",
  /** A claim whose worker died (lease expired): an operator may release it. */
  stuckKey: "capture:ord-e2e-stuck",
  /** An at-most-once step whose worker died: never released. */
  stuckAtMostOnceKey: "receipt:ord-e2e-stuck",
  /** Keys with every character the API must round-trip. */
  oddKeys: ["odd:a/b c%20?x#y", "odd:ünïcødé-✓", "odd:50% off & more"],
  /** Another acme order's uncaught violation: never listed on this order's keys. */
  otherViolationKey: "mark-paid:ord-e2e-4712",
} as const;

/**
 * Seeds effects for the Keys page and API tests: one order's three steps in acme (a capture that
 * ran once with 3 duplicates suppressed, the last 49 s after the first; its outcome holds a card
 * number and an e-mail address, by field name and inside text, and a phone number), the same keys in globex, two stuck claims, odd keys, and
 * uncaught violations on this order's mark-paid, another order's and globex's, the capture's
 * delivery timeline, and a capture taken over after its first worker died. Needs partitions KEYS_SEED_DAYS_BACK back.
 */
export async function seedKeys(db: Queryable, now: Date = new Date()): Promise<void> {
  const t0 = new Date(now.getTime() - KEYS_SEED_DAYS_BACK * 86_400_000);
  const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
  const { tenant, otherTenant, orderId, messageId } = KEYS_SEED;
  const insert = (row: {
    tenant: string;
    key: string;
    jobType: string;
    status: string;
    policy: string;
    attempt?: number;
    owner?: string | null;
    leaseUntil?: Date | null;
    messageId: string;
    outcome?: unknown;
    createdAt: Date;
    completedAt?: Date | null;
    duplicates?: number;
    lastDuplicateAt?: Date | null;
    gap?: number | null;
  }) =>
    db.query(
      `INSERT INTO effects (tenant_id, key, job_type, status, policy, attempt, owner, lease_until, first_message_id,
                            last_message_id, outcome, created_at, updated_at, completed_at, duplicate_count,
                            last_duplicate_at, max_gap_seconds)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10, $11, $11, $12, $13, $14, $15)`,
      [
        row.tenant,
        row.key,
        row.jobType,
        row.status,
        row.policy,
        row.attempt ?? 1,
        row.owner ?? null,
        row.leaseUntil ?? null,
        row.messageId,
        row.outcome === undefined ? null : JSON.stringify(row.outcome),
        row.createdAt,
        row.completedAt ?? null,
        row.duplicates ?? 0,
        row.lastDuplicateAt ?? null,
        row.gap ?? null,
      ],
    );
  for (const tid of [tenant, otherTenant]) {
    const mine = tid === tenant;
    await insert({
      tenant: tid,
      key: `capture:${orderId}`,
      jobType: "capture-payment",
      status: "completed",
      policy: "external",
      messageId: mine ? messageId : `${messageId}-globex`,
      outcome: mine
        ? {
            chargeId: "ch_e2e_1",
            amount: 4200,
            card: KEYS_SEED.card,
            receiptTo: KEYS_SEED.email,
            note: `paid by ${KEYS_SEED.email}`,
            memo: `charged ${KEYS_SEED.card}`,
            customerPhone: "+1 555 0100",
          }
        : { chargeId: "ch_GLOBEX_SECRET", amount: 1 },
      createdAt: at(0),
      completedAt: at(1),
      duplicates: mine ? 3 : 0,
      lastDuplicateAt: mine ? at(49) : null,
      gap: mine ? 49 : null,
    });
    await insert({
      tenant: tid,
      key: `mark-paid:${orderId}`,
      jobType: "mark-paid",
      status: "completed",
      policy: "transactional",
      messageId: mine ? messageId : `${messageId}-globex`,
      outcome: { paid: true },
      createdAt: at(2),
      completedAt: at(2),
    });
    await insert({
      tenant: tid,
      key: `receipt:${orderId}`,
      jobType: "send-receipt",
      status: "completed",
      policy: "at_most_once",
      messageId: mine ? messageId : `${messageId}-globex`,
      outcome: { sent: true },
      createdAt: at(3),
      completedAt: at(3),
    });
  }
  await insert({
    tenant,
    key: KEYS_SEED.takeoverKey,
    jobType: "capture-payment",
    status: "completed",
    policy: "external",
    attempt: 2,
    owner: "worker-b",
    messageId: "msg-e2e-takeover",
    outcome: { chargeId: "ch_e2e_takeover" },
    createdAt: at(20),
    completedAt: at(66),
    duplicates: 1,
    lastDuplicateAt: at(125),
    gap: 105,
  });
  await insert({
    tenant,
    key: KEYS_SEED.stuckKey,
    jobType: "capture-payment",
    status: "in_progress",
    policy: "external",
    owner: "worker-dead",
    leaseUntil: at(30),
    messageId: "msg-e2e-stuck",
    createdAt: at(10),
  });
  await insert({
    tenant,
    key: KEYS_SEED.stuckAtMostOnceKey,
    jobType: "send-receipt",
    status: "in_progress",
    policy: "at_most_once",
    owner: "worker-dead",
    leaseUntil: at(30),
    messageId: "msg-e2e-stuck",
    createdAt: at(11),
  });
  for (const [i, key] of KEYS_SEED.oddKeys.entries()) {
    await insert({
      tenant,
      key,
      jobType: "odd",
      status: "completed",
      policy: "once",
      messageId: `msg-odd-${i}`,
      outcome: { i },
      createdAt: at(20 + i),
      completedAt: at(20 + i),
    });
  }
  // Three uncaught violations: this order's mark-paid in acme (its message names an e-mail address,
  // which the console redacts), another acme order's, and the same key in globex. A key's detail
  // lists only its own: never the other order's, never the other tenant's.
  await db.query(
    `INSERT INTO uncaught_violation_keys (occurred_at, tenant_id, job_type, constraint_name, key, message_id, message)
     VALUES ($1, $2, 'mark-paid', 'ledger_entries_order_id_key', $3, $4, $5),
            ($1, $2, 'mark-paid', 'ledger_entries_order_id_key', $6, $7, NULL),
            ($1, $8, 'mark-paid', 'globex_only_key', $3, $9, NULL)`,
    [
      at(2),
      tenant,
      `mark-paid:${orderId}`,
      messageId,
      `duplicate key value violates unique constraint "ledger_entries_order_id_key" (billing ${KEYS_SEED.email})`,
      KEYS_SEED.otherViolationKey,
      `${messageId}-other`,
      otherTenant,
      `${messageId}-globex`,
    ],
  );
  // The acme capture's deliveries as its workers recorded them: the first claim, a concurrent copy
  // that waited for it, and the later duplicates (the last 49 s after the first); globex's copy of
  // the key has one delivery of its own, never shown for acme.
  const delivery = (tid: string, seconds: number, answer: string, message: string, deliveryAttempt: number, worker: string) => ({
    tenant: tid,
    key: `capture:${orderId}`,
    at: at(seconds),
    answer,
    jobType: "capture-payment",
    messageId: message,
    deliveryAttempt,
    effectAttempt: 1,
    worker,
    claimMs: answer === "waited" ? 480 : 2.5,
    effectCreatedAt: at(0),
  });
  await seedDeliveries(db, [
    delivery(tenant, 0, "claimed", messageId, 1, "worker-a"),
    delivery(tenant, 0.5, "waited", messageId, 1, "worker-b"),
    delivery(tenant, 30, "duplicate", messageId, 2, "worker-a"),
    delivery(tenant, 49, "duplicate", messageId, 3, "worker-b"),
    delivery(otherTenant, 0, "claimed", `${messageId}-globex`, 1, "worker-globex"),
  ]);
  // The takeover: the first worker died holding the claim, the redelivery 45 s later took it over.
  const takeover = (seconds: number, answer: string, deliveryAttempt: number, effectAttempt: number, worker: string) => ({
    tenant,
    key: KEYS_SEED.takeoverKey,
    at: at(seconds),
    answer,
    jobType: "capture-payment",
    messageId: "msg-e2e-takeover",
    deliveryAttempt,
    effectAttempt,
    worker,
    claimMs: 3,
    effectCreatedAt: at(20),
  });
  await seedDeliveries(db, [
    takeover(20, "claimed", 1, 1, "worker-dead"),
    takeover(65, "takeover", 2, 2, "worker-b"),
    takeover(125, "duplicate", 3, 2, "worker-a"),
  ]);
}
