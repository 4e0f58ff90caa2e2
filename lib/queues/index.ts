/** Broker adapters over the worker library: pg-boss, BullMQ and a generic one. See docs/adapters.md. */
export { type BullWorkOptions, createIdempotentWorker, deliveryOfBullJob, redisConnection } from "./bullmq";
export {
  DEFAULT_IN_FLIGHT_DELAY_MS,
  type Decision,
  type DeliveryInfo,
  decide,
  type EffectsRunner,
  type IdempotentHandler,
  processDelivery,
} from "./core";
export { createDeliveryHandler } from "./generic";
export { CARRY_FIELD, type DeadLetterInfo, deliveryOf, type PgBossWorkOptions, startBoss, workIdempotent } from "./pgboss";
