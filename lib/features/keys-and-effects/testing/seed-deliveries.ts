import type { Queryable } from "../../../db/types";

/** One delivery as a worker's timeline would have recorded it. */
export interface SeedDelivery {
  tenant: string;
  key: string;
  at: Date;
  answer: string;
  jobType: string;
  messageId: string | null;
  deliveryAttempt: number | null;
  effectAttempt: number;
  worker: string;
  claimMs: number;
  /** The effect the delivery met (its created_at); null when it met none. */
  effectCreatedAt: Date | null;
}

/**
 * Writes deliveries into delivery_timeline for the console's tests, each as a chunk of one, laid
 * out as lib/idempotency/timeline.ts lays them out: a claimed delivery in a first-delivery chunk
 * (later_keys NULL), any other naming its key in later_keys.
 */
export async function seedDeliveries(db: Queryable, deliveries: readonly SeedDelivery[]): Promise<void> {
  for (const d of deliveries) {
    await db.query(
      `INSERT INTO delivery_timeline (first_at, last_at, chunk_id, worker_id, later_keys, tenants, keys, job_types,
                                      delivered_at, answers, message_ids, delivery_attempts, effect_attempts, claim_ms,
                                      effect_created_at)
       VALUES ($3, $3, gen_random_uuid(), $9, CASE WHEN $4 = 'claimed' THEN NULL ELSE ARRAY[$1 || chr(31) || $2] END,
               ARRAY[$1], ARRAY[$2], ARRAY[$5], ARRAY[$3::timestamptz], ARRAY[$4], ARRAY[$6], ARRAY[$7::int],
               ARRAY[$8::int], ARRAY[$10::real], ARRAY[$11::timestamptz])`,
      [
        d.tenant,
        d.key,
        d.at,
        d.answer,
        d.jobType,
        d.messageId,
        d.deliveryAttempt,
        d.effectAttempt,
        d.worker,
        d.claimMs,
        d.effectCreatedAt,
      ],
    );
  }
}
