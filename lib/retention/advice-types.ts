/**
 * The retention advisor's JSON shape, shared by lib/retention/advise-retention.ts, the API route,
 * the CLI and the React components (types and constants only: safe to import from client code).
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

export type RefusalCode = "NO_DATA" | "TOO_FEW_SAMPLES" | "OPEN_ENDED_BUCKET";

export interface Refusal {
  code: RefusalCode;
  /** The job type concerned, or null for the whole fleet. */
  jobType: string | null;
  message: string;
}

export interface JobTypeAdvice {
  jobType: string;
  samples: number;
  /** Gaps in the open-ended top bucket (beyond the last bound): their length is unknown. */
  overflow: number;
  /** What the basis was taken from: the chosen percentile, or the observed maximum. */
  basisUsed: AdviceBasis;
  basisSeconds: number | null;
  /** basisSeconds × safetyFactor + deadLetterDwellSeconds. */
  candidateSeconds: number | null;
  note: string | null;
}

export type RetentionVerdict = "ok" | "below_recommendation" | "below_observed_max";

export interface RetentionComparison {
  retentionSeconds: number;
  /** The largest gap certainly observed: the lower bound of the highest non-empty bucket, or a per-effect max_gap_seconds. */
  observedMaxSeconds: number | null;
  observedMaxSource: string | null;
  /** Red: the retention is shorter than a gap that really happened. */
  belowObservedMax: boolean;
  /** Duplicates in the window that certainly arrived later than the retention allows (each would have run as new work once pruned). */
  lateDuplicates: number;
  /** The same, counting the bucket the retention falls inside. */
  lateDuplicatesUpTo: number;
  /** Claims whose delivery was published longer ago than the retention (rollup claims_beyond_retention). */
  claimsBeyondRetention: number;
  verdict: RetentionVerdict;
  message: string;
}

export interface AdviceInputs {
  from: string;
  to: string;
  basis: AdviceBasis;
  safetyFactor: number;
  deadLetterDwellSeconds: number;
  minSamples: number;
  partitionSeconds: number;
  retentionSeconds: number;
  maxRetryWindowSeconds: number;
  /** Where the largest declared retry window came from. */
  maxRetryWindowSource: string;
  bounds: number[];
}

export interface Advice {
  status: "recommended" | "refused";
  /** Null when refused. */
  recommendedSeconds: number | null;
  /** The job type whose candidate decided the recommendation (or "retry window" when the floor did). */
  decidedBy: string | null;
  refusals: Refusal[];
  /** Human-readable reasoning, one sentence each, in order. */
  reasons: string[];
  jobTypes: JobTypeAdvice[];
  comparison: RetentionComparison;
  /** Each provider that dedupes keys for a while (Stripe: 24 h), and the redeliveries that came after it. */
  providers: ProviderWindowAdvice[];
  inputs: AdviceInputs;
}

/**
 * A provider's own idempotency-key window against the observed gaps of the job types it holds: a
 * redelivery later than the window would have run again at the provider, and only Onceboard's
 * record stopped it.
 */
export interface ProviderWindowAdvice {
  provider: string;
  label: string;
  keyWindowSeconds: number;
  jobTypes: string[];
  /** Redeliveries of those job types whose gap was certainly longer than the window… */
  afterWindow: number;
  /** …and at most this many (a histogram bucket straddling the window may hold more). */
  afterWindowUpTo: number;
  message: string;
}
