/** What /api/v1/effects answers (shared by route handlers and the Keys page's components). */

export const EFFECT_STATUSES = ["in_progress", "completed", "failed", "abandoned"] as const;
export type EffectStatus = (typeof EFFECT_STATUSES)[number];

export type { EffectDetail, EffectSearchResponse, EffectSummary, JobStep, ReleaseResponse } from "../contract/effects";
