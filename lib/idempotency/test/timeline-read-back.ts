import type { PendingDelivery, toChunks } from "../timeline";

/** A chunk's value for delivery i, as the readers take it (migration 0015). */
export const valueAt = <T>(column: readonly T[], i: number): T | undefined => (column.length === 1 ? column[0] : column[i]);

/** Every delivery of the chunks, read back as the key page reads them. */
export function readBack(chunks: ReturnType<typeof toChunks>): PendingDelivery[] {
  return chunks.flatMap((c) =>
    c.keys.map((key, i) => {
      const delivered = Date.parse(valueAt(c.delivered_at, i) as string);
      const created = c.effect_created_at.length === 0 ? delivered : valueAt(c.effect_created_at, i);
      return {
        tenant: valueAt(c.tenants, i) as string,
        key,
        jobType: valueAt(c.job_types, i) as string,
        at: delivered,
        answer: valueAt(c.answers, i) as PendingDelivery["answer"],
        messageId: valueAt(c.message_ids, i) ?? null,
        deliveryAttempt: valueAt(c.delivery_attempts, i) ?? null,
        effectAttempt: valueAt(c.effect_attempts, i) as number,
        claimMs: valueAt(c.claim_ms, i) as number,
        effectCreatedAt: typeof created === "string" ? Date.parse(created) : (created ?? null),
      };
    }),
  );
}
