/**
 * The Keys page's client-safe constants, and the types of what /api/v1/effects answers (their
 * schemas are lib/features/keys-and-effects/contract.ts; re-exported as types only, so no zod reaches the browser).
 */

export const EFFECT_STATUSES = ["in_progress", "completed", "failed", "abandoned"] as const;
export type EffectStatus = (typeof EFFECT_STATUSES)[number];

/**
 * A platform search that names no tenant looks this far back (the tenant's search, 90 days): no
 * index spans tenants, so the days bound what it reads. Shared with the Keys page, which says so.
 */
export const CROSS_TENANT_SEARCH_DAYS = 7;

/**
 * What one delivery's claim answered (lib/idempotency/timeline.ts): claimed, duplicate, waited
 * (found it in flight, waited, got the outcome), in_flight (the wait ran out), takeover (the
 * owner's lease had expired), retry (the previous attempt failed), abandoned, key_reuse,
 * beyond_retention.
 */
export const DELIVERY_ANSWERS = [
  "claimed",
  "duplicate",
  "waited",
  "in_flight",
  "takeover",
  "retry",
  "abandoned",
  "key_reuse",
  "beyond_retention",
] as const;
export type DeliveryAnswer = (typeof DELIVERY_ANSWERS)[number];

/** The most deliveries a key's detail carries (the newest). */
export const TIMELINE_LIMIT = 200;
