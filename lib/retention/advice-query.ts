import { z } from "zod";
import { safeText } from "../fields";
import { ADVICE_BASES, ADVICE_DEFAULTS } from "./advice-types";
import type { GetAdviceOptions } from "./advise-retention";

/**
 * The advisor's knobs, shared by GET /api/v1/retention/advice (query string) and
 * `npm run retention -- advise` (flags): window (days, 1–90), basis (p90 | p99 | p99.9 | max),
 * safetyFactor (1–10), deadLetterDwell (seconds the dead-letter queue may hold a message before a
 * replay), jobType, minSamples.
 */
export const adviceQuerySchema = z.object({
  window: z.coerce.number().int().min(1).max(90).default(ADVICE_DEFAULTS.windowDays),
  basis: z.enum(ADVICE_BASES).default(ADVICE_DEFAULTS.basis),
  safetyFactor: z.coerce.number().min(1).max(10).default(ADVICE_DEFAULTS.safetyFactor),
  deadLetterDwell: z.coerce
    .number()
    .min(0)
    .max(90 * 86_400)
    .default(ADVICE_DEFAULTS.deadLetterDwellSeconds),
  minSamples: z.coerce.number().int().min(1).max(1_000_000).default(ADVICE_DEFAULTS.minSamples),
  jobType: safeText(200).trim().min(1).optional(),
});

export function toAdviceOptions(q: z.infer<typeof adviceQuerySchema>): GetAdviceOptions {
  return {
    windowDays: q.window,
    basis: q.basis,
    safetyFactor: q.safetyFactor,
    deadLetterDwellSeconds: q.deadLetterDwell,
    minSamples: q.minSamples,
    jobType: q.jobType ?? null,
  };
}
