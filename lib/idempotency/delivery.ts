import type { EffectsCore } from "./core";
import { InvalidEffectKeyError } from "./errors";

/** What a broker adapter knows about a delivery. All optional; pass what the broker gives. */
export interface Delivery {
  /** The broker's message id: logged, stored as first/last_message_id. Never the effect key. */
  messageId?: string | null;
  /** The broker's delivery attempt (1 = first). */
  attempt?: number | null;
  /** True when the broker says this is a redelivery; defaults to attempt > 1. */
  redelivered?: boolean;
  /** When the message was first published: a delivery older than `retention` whose record is gone is refused. */
  publishedAt?: Date | string | number | null;
}

export function toPublishedAt(value: Delivery["publishedAt"]): Date | null {
  if (value === null || value === undefined) return null;
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) throw new InvalidEffectKeyError(`publishedAt is not a date: ${String(value)}`);
  return date;
}

/** Counts one delivery handed to once() or job(). */
export function countDelivery(core: EffectsCore, jobType: string, delivery: Delivery): void {
  if (typeof jobType !== "string" || jobType.length === 0 || jobType.length > 255) {
    throw new InvalidEffectKeyError("jobType must be a non-empty string of at most 255 characters");
  }
  const redelivered = delivery.redelivered ?? (delivery.attempt ?? 1) > 1;
  core.metrics.deliveries.inc({ job_type: jobType, redelivered: String(redelivered) });
  core.rollups?.add(jobType, { deliveries: 1, redeliveries: redelivered ? 1 : 0 });
}
