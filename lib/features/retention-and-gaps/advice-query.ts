import type { GetAdviceOptions } from "./advise-retention";
import type { AdviceQuery } from "./contract";

/** The contract's advice query (lib/features/retention-and-gaps/contract.ts) as the advisor's options. */
export function toAdviceOptions(q: AdviceQuery): GetAdviceOptions {
  return {
    windowDays: q.window,
    basis: q.basis,
    safetyFactor: q.safetyFactor,
    deadLetterDwellSeconds: q.deadLetterDwell,
    minSamples: q.minSamples,
    jobType: q.jobType ?? null,
  };
}
