/**
 * The Keys page's client-safe constants, and the types of what /api/v1/effects answers (their
 * schemas are lib/contract/effects.ts; re-exported as types only, so no zod reaches the browser).
 */

export const EFFECT_STATUSES = ["in_progress", "completed", "failed", "abandoned"] as const;
export type EffectStatus = (typeof EFFECT_STATUSES)[number];

/**
 * A platform search that names no tenant looks this far back (the tenant's search, 90 days): no
 * index spans tenants, so the days bound what it reads. Shared with the Keys page, which says so.
 */
export const CROSS_TENANT_SEARCH_DAYS = 7;

export type {
  EffectDetail,
  EffectSearchResponse,
  EffectSummary,
  JobStep,
  ProviderSide,
  ReleaseResponse,
} from "../contract/effects";
