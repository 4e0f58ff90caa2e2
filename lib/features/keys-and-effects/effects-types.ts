/**
 * The Keys page's client-safe constants: zod-free, so the browser may import them (the types of
 * what /api/v1/effects answers are inferred in contract.ts, and imported from there as types).
 */

export { EFFECT_STATUSES, type EffectStatus } from "../../idempotency/states";

/**
 * A platform search that names no tenant looks this far back (the tenant's search, 90 days): no
 * index spans tenants, so the days bound what it reads. Shared with the Keys page, which says so.
 */
export const CROSS_TENANT_SEARCH_DAYS = 7;

/** A search of one tenant without `from` looks this far back: a retention longer than this needs an explicit from. */
export const TENANT_SEARCH_DAYS = 90;

/** What one delivery's claim answered: the library's timeline answers. */
export { TIMELINE_ANSWERS as DELIVERY_ANSWERS, type TimelineAnswer as DeliveryAnswer } from "../../idempotency/states";

/** The most deliveries a key's detail carries (the newest). */
export const TIMELINE_LIMIT = 200;
