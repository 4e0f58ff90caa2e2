/**
 * Broker adapters over the worker library: what every adapter shares (core) and the generic one.
 * Nothing broker-specific: each broker has its own entry point, so importing this one never loads
 * a broker client that may not be installed. See docs/adapters.md.
 *   pg-boss: lib/queues/pgboss.ts (startBoss, workIdempotent, consumeIdempotent, deliveryOf, CARRY_FIELD)
 *   BullMQ:  lib/queues/bullmq.ts (createIdempotentWorker, redisConnection, deliveryOfBullJob)
 */
export {
  type BatchEffectsRunner,
  type BatchItem,
  DEFAULT_IN_FLIGHT_DELAY_MS,
  type DeadLetterInfo,
  type Decision,
  type DeliveryInfo,
  decide,
  type EffectsRunner,
  type IdempotentHandler,
  processBatch,
  processDelivery,
} from "./deliveries";
export { createDeliveryHandler } from "./generic";
