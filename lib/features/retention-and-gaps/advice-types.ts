/**
 * The retention advisor's constants, and the types of its answer (schemas in
 * lib/features/retention-and-gaps/contract.ts), for lib/features/retention-and-gaps/advise-retention.ts, the API route, the CLI and the
 * React components (types and constants only: safe to import from client code).
 */
export const ADVICE_BASES = ["p90", "p99", "p99.9", "max"] as const;
export type AdviceBasis = (typeof ADVICE_BASES)[number];
export const BASIS_QUANTILE: Record<Exclude<AdviceBasis, "max">, number> = { p90: 0.9, p99: 0.99, "p99.9": 0.999 };

export const ADVICE_DEFAULTS = {
  basis: "p99.9" as AdviceBasis,
  safetyFactor: 2,
  deadLetterDwellSeconds: 0,
  /** p99.9 is only an estimate with at least 1 / (1 − 0.999) samples. */
  minSamples: 1000,
  windowDays: 30,
};
