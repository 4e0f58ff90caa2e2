/**
 * Broker adapters over the worker library: what every adapter shares (core) and the generic one.
 * Nothing broker-specific: each broker has its own entry point, so importing this one never loads
 * a broker client that may not be installed. See docs/adapters.md.
 *   pg-boss: lib/queues/pgboss.ts (startBoss, workIdempotent, consumeIdempotent, deliveryOf, CARRY_FIELD)
 *   BullMQ:  lib/queues/bullmq.ts (createIdempotentWorker, redisConnection, deliveryOfBullJob)
 *   RabbitMQ: lib/queues/rabbitmq.ts (consumeIdempotent, assertTopology, publishJson, deliveryOfAmqpMessage)
 *   NATS JetStream: lib/queues/nats.ts (consumeIdempotent, assertJetStream, natsConnection, deliveryOfJsMsg)
 */
export {
  type BatchEffectsRunner,
  type BatchItem,
  DEFAULT_IN_FLIGHT_DELAY_MS,
  type DeadLetterInfo,
  type Decision,
  type DeliveryInfo,
  decide,
  defaultRetryBackoffMs,
  type EffectsRunner,
  type IdempotentHandler,
  MAX_ATTEMPTS,
  processBatch,
  processDelivery,
  UNDECODABLE_MESSAGE,
  undecodable,
  withAttemptLimit,
} from "./deliveries";
export { createDeliveryHandler } from "./generic";
