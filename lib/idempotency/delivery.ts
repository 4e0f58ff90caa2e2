import type { EffectsCore } from "./core";

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
  /**
   * The delivery's span context (OpenTelemetry's SpanContext: ids in lowercase hex), e.g. what the
   * adapter extracted from the message's `traceparent`: each claim and step span links to it.
   * Ignored unless @opentelemetry/api is installed.
   */
  traceContext?: { traceId: string; spanId: string; traceFlags?: number } | null;
}

/** Counts one delivery handed to once() or job() (after its metadata was validated: spec.ts checkDelivery). */
export function countDelivery(core: EffectsCore, jobType: string, redelivered: boolean): void {
  core.metrics.deliveries.inc({ job_type: jobType, redelivered: String(redelivered) });
  core.rollups?.add(jobType, { deliveries: 1, redeliveries: redelivered ? 1 : 0 });
}
