import { type Decision, type DeliveryInfo, type EffectsRunner, type IdempotentHandler, processDelivery } from "./deliveries";

/**
 * The generic adapter, for any consumer (amqplib, SQS, Kafka, a cron loop): call it with the
 * message and the delivery metadata your broker gives, then apply the returned decision with your
 * broker's own verbs. See docs/adapters.md for an amqplib example.
 *
 *   ack          → acknowledge (the effect ran now, or ran before: `result` is the stored outcome)
 *   retry-later  → redeliver after `delayMs` (nack + delayed requeue, or re-publish with a delay)
 *   dead-letter  → reject to the dead-letter queue with `reason`
 *   fail         → your broker's normal retry (nack / let the visibility timeout lapse)
 */
export function createDeliveryHandler<T, R>(
  effects: EffectsRunner,
  handler: IdempotentHandler<T, R>,
  options: { inFlightDelayMs?: number } = {},
): (data: T, delivery: DeliveryInfo) => Promise<Decision<R>> {
  return (data, delivery) => processDelivery(effects, handler, data, delivery, options);
}
