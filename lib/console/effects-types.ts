/**
 * The Keys page's client-safe constants, and the types of what /api/v1/effects answers (their
 * schemas are lib/contract/effects.ts; re-exported as types only, so no zod reaches the browser).
 */

export const EFFECT_STATUSES = ["in_progress", "completed", "failed", "abandoned"] as const;
export type EffectStatus = (typeof EFFECT_STATUSES)[number];

export type { EffectDetail, EffectSearchResponse, EffectSummary, JobStep, ReleaseResponse } from "../contract/effects";
