import { z } from "zod";
import { instant, nullableInstant } from "../../console/common-contract";
import { safeText } from "../../fields";
import { ADVICE_BASES, ADVICE_DEFAULTS } from "./advice-types";
import { PARTITION_INTERVALS } from "./retention-types";

/** The contract of /api/v1/retention and its plan, apply, settings and advice: queries, body and answers. */

/** Maintenance runs the Retention page lists by default, and at most. */
export const DEFAULT_RETENTION_RUNS = 20;
export const MAX_RETENTION_RUNS = 200;

/** GET /api/v1/retention?runs= (1-200, default 20): how many maintenance runs to list, newest first. */
export const retentionQuery = z.object({
  runs: z.coerce.number().int().min(1).max(MAX_RETENTION_RUNS).optional(),
});

/** PUT /api/v1/retention/settings body: lowering below a live worker's retry window needs force and a reason. */
export const retentionSettingsBody = z
  .object({
    retentionDays: z.number().int().min(1).max(3650).optional(),
    maxRetryWindowDays: z.number().int().min(0).max(3650).optional(),
    partitionInterval: z.enum(PARTITION_INTERVALS).optional(),
    premakeCount: z.number().int().min(1).max(1000).optional(),
    force: z.boolean().optional(),
    reason: safeText(500).trim().min(3).optional(),
  })
  .strict();

/**
 * GET /api/v1/retention/advice, and `npm run retention -- advise`'s flags: window (days, 1–90),
 * basis, safetyFactor (1–10), deadLetterDwell (seconds the dead-letter queue may hold a message
 * before a replay), minSamples, jobType.
 */
export const adviceQuery = z.object({
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
export type AdviceQuery = z.infer<typeof adviceQuery>;

export const retentionSettingsView = z.object({
  retentionDays: z.number(),
  maxRetryWindowDays: z.number(),
  partitionInterval: z.enum(PARTITION_INTERVALS),
  premakeCount: z.number().int(),
  updatedAt: nullableInstant,
  updatedBy: z.string().nullable(),
});
export type RetentionSettingsView = z.infer<typeof retentionSettingsView>;

const partitionView = z.object({
  name: z.string(),
  from: nullableInstant,
  to: nullableInstant,
  estimatedRows: z.number(),
  bytes: z.number(),
  liveClaims: z.number().nullable().meta({ description: "In-progress claims with a live lease; null when not counted" }),
  detachPending: z.boolean(),
  action: z.enum(["keep", "drop", "finalize"]),
  guard: z.enum(["retention", "retry-window", "in-flight", "newest", "current", "catch-all"]).nullable(),
  reason: z.string(),
});
export type PartitionView = z.infer<typeof partitionView>;

export const planView = z.object({
  now: instant,
  keepSeconds: z.number(),
  dropBefore: instant,
  runwayHours: z.number(),
  create: z.array(z.object({ name: z.string(), from: instant, to: instant, reason: z.enum(["ahead", "missing"]) })),
  partitions: z.array(partitionView),
  orphans: z.array(z.string()),
  index: z
    .array(z.object({ partition: z.string(), index: z.string(), invalid: z.array(z.string()), reason: z.string() }))
    .meta({ description: "Closed partitions whose Keys index the next run builds, and why" }),
});
export type PlanView = z.infer<typeof planView>;

const liveWorkerView = z.object({
  workerId: z.string(),
  maxRetryWindowSeconds: z.number(),
  host: z.string().nullable(),
  pid: z.number().int().nullable(),
  heartbeatAt: instant,
});
export type LiveWorkerView = z.infer<typeof liveWorkerView>;

const operation = z.object({ kind: z.string(), partition: z.string(), result: z.string(), detail: z.string().optional() });

const maintenanceRunView = z.object({
  id: z.string(),
  runner: z.string(),
  trigger: z.string(),
  startedAt: instant,
  finishedAt: nullableInstant,
  result: z.string(),
  operations: z.array(operation),
  error: z.string().nullable(),
});
export type MaintenanceRunView = z.infer<typeof maintenanceRunView>;

export const retentionView = z.object({
  settings: retentionSettingsView,
  plan: planView.nullable().meta({ description: "Null for a tenant token: partitions hold every tenant's effects" }),
  liveWorkers: z.array(liveWorkerView),
  observedMaxGapSeconds: z.number().nullable().meta({ description: "Largest redelivery gap seen on the reader's effects" }),
  runs: z.array(maintenanceRunView),
});
export type RetentionView = z.infer<typeof retentionView>;

export const applyResultView = z.object({
  result: z.enum(["success", "failed", "skipped"]),
  runId: z.string().nullable(),
  operations: z.array(operation),
  error: z.string().optional(),
});
export type ApplyResultView = z.infer<typeof applyResultView>;

export const settingsUpdateView = z.object({ settings: retentionSettingsView, warnings: z.array(z.string()) });
export type SettingsUpdateView = z.infer<typeof settingsUpdateView>;

const basis = z.enum(ADVICE_BASES);
const refusal = z.object({
  code: z.enum(["NO_DATA", "TOO_FEW_SAMPLES", "OPEN_ENDED_BUCKET"]),
  jobType: z.string().nullable().meta({ description: "The job type concerned, or null for the whole fleet" }),
  message: z.string(),
});
export type Refusal = z.infer<typeof refusal>;

const jobTypeAdvice = z.object({
  jobType: z.string(),
  samples: z.number(),
  overflow: z.number().meta({ description: "Gaps in the open-ended top bucket: their length is unknown" }),
  basisUsed: basis,
  basisSeconds: z.number().nullable(),
  candidateSeconds: z.number().nullable().meta({ description: "basisSeconds × safetyFactor + deadLetterDwellSeconds" }),
  maxSeconds: z.number().nullable().meta({
    description:
      "The job type's longest gap that basisSeconds never exceeds: exact when an effect still kept shows it, else its highest bucket's upper bound (null when open-ended)",
  }),
  maxExact: z.boolean().meta({ description: "maxSeconds is a gap that happened, not a bucket's bound" }),
  note: z.string().nullable(),
});
export type JobTypeAdvice = z.infer<typeof jobTypeAdvice>;

const retentionComparison = z.object({
  retentionSeconds: z.number(),
  observedMaxSeconds: z
    .number()
    .nullable()
    .meta({ description: "The longest gap known to have happened (exact, or the lower bound of a bucket)" }),
  observedMaxExact: z
    .boolean()
    .meta({ description: "observedMaxSeconds is a gap that happened; false: the longest gap is longer than it" }),
  observedMaxUpToSeconds: z.number().nullable().meta({
    description:
      "The longest gap may be as long as this (a bucket's upper bound where no kept effect shows it; null when open-ended)",
  }),
  observedMaxSource: z.string().nullable(),
  belowObservedMax: z.boolean().meta({ description: "The retention is shorter than a gap that really happened" }),
  lateDuplicates: z.number().meta({
    description:
      "Duplicate deliveries in the window whose gap is certainly longer than the current retention (rollup histogram). Not the Delivery gaps page's latestLate, which lists effects whose longest gap exceeds the retry window (lateThresholdSeconds): a shorter threshold, so that list can name duplicates this does not count",
  }),
  lateDuplicatesUpTo: z
    .number()
    .meta({ description: "lateDuplicates plus those in a histogram bucket that straddles the retention" }),
  claimsBeyondRetention: z.number(),
  verdict: z.enum(["ok", "below_recommendation", "below_observed_max"]),
  message: z.string(),
});
export type RetentionComparison = z.infer<typeof retentionComparison>;

const adviceInputs = z.object({
  from: instant,
  to: instant,
  basis,
  safetyFactor: z.number(),
  deadLetterDwellSeconds: z.number(),
  minSamples: z.number(),
  partitionSeconds: z.number(),
  retentionSeconds: z.number(),
  maxRetryWindowSeconds: z.number(),
  maxRetryWindowSource: z.string(),
  bounds: z.array(z.number()),
});

/**
 * A provider's own idempotency-key window against the observed gaps of the job types it holds: a
 * redelivery later than the window would have run again at the provider, and only Onceboard's
 * record stopped it.
 */
const providerWindowAdviceSchema = z.object({
  provider: z.string(),
  label: z.string(),
  keyWindowSeconds: z.number(),
  jobTypes: z.array(z.string()),
  afterWindow: z
    .number()
    .int()
    .meta({ description: "Redeliveries of those job types whose gap was certainly longer than the window" }),
  afterWindowUpTo: z
    .number()
    .int()
    .meta({ description: "…and at most this many (a histogram bucket straddling the window may hold more)" }),
  message: z.string(),
});
export type ProviderWindowAdvice = z.infer<typeof providerWindowAdviceSchema>;

export const advice = z.object({
  status: z.enum(["recommended", "refused"]),
  recommendedSeconds: z.number().nullable(),
  decidedBy: z.string().nullable(),
  refusals: z.array(refusal),
  reasons: z.array(z.string()),
  jobTypes: z.array(jobTypeAdvice),
  comparison: retentionComparison,
  providers: z
    .array(providerWindowAdviceSchema)
    .meta({ description: "Each provider that dedupes keys for a while (Stripe: 24 h), and the redeliveries after it" }),
  inputs: adviceInputs,
});
export type Advice = z.infer<typeof advice>;

/** The two settings the advice's Apply changes or is blocked by, before or after it. */
const adviceSettings = z.object({ retentionDays: z.number().int(), maxRetryWindowDays: z.number().int() });

/** POST /api/v1/retention/advice/apply body: the change the preview showed, confirmed, and the settings it was shown against. */
export const adviceApplyBody = z
  .object({
    retentionDays: z.number().int().min(1).max(3650),
    expect: adviceSettings.meta({
      description: "The settings the preview was made against: anything else answers 409 RETENTION_STALE",
    }),
    force: z.boolean().optional(),
    reason: safeText(500).trim().min(3).optional(),
  })
  .strict();
export type AdviceApplyBody = z.infer<typeof adviceApplyBody>;

const blocker = z.object({
  setting: z.enum(["retentionDays", "maxRetryWindowDays", "workerMaxRetryWindow"]),
  message: z.string().meta({ description: "The value the setting must reach first" }),
});

const partitionChange = z.object({
  name: z.string(),
  from: nullableInstant,
  to: nullableInstant,
  estimatedRows: z.number(),
  now: z.enum(["keep", "drop", "finalize"]).meta({ description: "What the next run does with today's settings" }),
  after: z.enum(["keep", "drop", "finalize"]).meta({ description: "…and with the advised ones" }),
  reason: z.string(),
});

/** GET /api/v1/retention/advice/preview: what applying the advice would change, and what stands in its way. */
export const advicePreview = z.object({
  advice: advice.pick({ status: true, recommendedSeconds: true, decidedBy: true, refusals: true }),
  change: z
    .object({ before: adviceSettings, after: adviceSettings })
    .nullable()
    .meta({ description: "Null when the advisor has no recommendation or it equals the current retention" }),
  blockers: z.array(blocker).meta({ description: "What must change first; empty when the change can be applied as is" }),
  refusal: z
    .object({ code: z.enum(["RETENTION_INVALID", "RETENTION_REFUSED"]), message: z.string() })
    .nullable()
    .meta({ description: "What applying would answer now (RETENTION_REFUSED can be forced with a reason)" }),
  warnings: z.array(z.string()),
  plan: planView.nullable().meta({ description: "The next maintenance run with the advised settings (null without a change)" }),
  partitionChanges: z
    .array(partitionChange)
    .meta({ description: "Partitions the advised settings treat differently from today's" }),
});
export type AdvicePreview = z.infer<typeof advicePreview>;
