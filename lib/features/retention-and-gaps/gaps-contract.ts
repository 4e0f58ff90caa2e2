import { z } from "zod";
import { instant } from "../../console/common-contract";
import { isoTime, safeText } from "../../fields";
import { advice } from "./contract";
import { GAP_RANGES, MAX_GAP_SPAN_SECONDS } from "./gaps-types";

/** The contract of GET /api/v1/gaps: its query (the Delivery gaps page parses its URL with it too) and its answer. */

/** ?range=1h|6h|24h|7d|30d (default 30d), or ?from=&to= (both, at most 90 days apart); ?jobType=, ?tenant=. */
export const gapsQuery = z
  .object({
    range: z.enum(GAP_RANGES).optional(),
    from: isoTime.optional(),
    to: isoTime.optional(),
    jobType: safeText(200).trim().min(1).optional(),
    tenant: safeText(200).trim().min(1).optional(),
  })
  .refine((q) => (q.from === undefined) === (q.to === undefined), { message: "from and to go together", path: ["from"] })
  .refine((q) => !(q.from && q.range), { message: "give either range or from/to", path: ["range"] })
  .refine((q) => !q.from || !q.to || Date.parse(q.from) < Date.parse(q.to), { message: "must be before to", path: ["from"] })
  .refine((q) => !q.from || !q.to || Date.parse(q.to) - Date.parse(q.from) <= MAX_GAP_SPAN_SECONDS * 1000, {
    message: "from/to may span at most 90 days",
    path: ["to"],
  });

const gapStats = z.object({
  samples: z.number(),
  p50: z.number().nullable(),
  p90: z.number().nullable(),
  p99: z.number().nullable(),
  p999: z.number().nullable(),
  maxAtLeast: z.number().nullable().meta({ description: "The largest gap is longer than this…" }),
  maxAtMost: z.number().nullable().meta({ description: "…and at most this (null when open-ended)" }),
  maxExact: z.boolean().meta({
    description: "maxAtLeast = maxAtMost is the longest gap itself (an effect still kept shows it), not a bucket's bounds",
  }),
  overflow: z.number(),
  beyondRetention: z.number().meta({ description: "Gaps certainly longer than the current retention" }),
});
export type GapStats = z.infer<typeof gapStats>;

const gapSeries = z.object({
  name: z.string(),
  buckets: z.array(z.number()).meta({ description: "One count per bucket of `bounds`, then the open-ended bucket" }),
  stats: gapStats,
});
export type GapSeries = z.infer<typeof gapSeries>;

const tenantGaps = gapSeries.extend({ late: z.number(), maxGapSeconds: z.number().nullable() });
export type TenantGaps = z.infer<typeof tenantGaps>;

const gapDay = z.object({
  day: instant.meta({ description: "UTC midnight" }),
  samples: z.number(),
  p99: z.number().nullable(),
  maxAtMost: z.number().nullable(),
  maxAtLeast: z.number().nullable(),
});
export type GapDay = z.infer<typeof gapDay>;

const lateDuplicate = z.object({
  tenant: z.string(),
  key: z.string(),
  jobType: z.string(),
  gapSeconds: z.number(),
  at: instant,
});
export type LateDuplicate = z.infer<typeof lateDuplicate>;

export const gapsResponse = z.object({
  range: z.enum([...GAP_RANGES, "custom"]),
  from: instant,
  to: instant,
  jobType: z.string().nullable(),
  tenant: z.string().nullable(),
  source: z.enum(["rollups", "effects"]).meta({
    description: "rollups: every duplicate's gap, all tenants; effects: per-effect largest gaps (a tenant filter)",
  }),
  bounds: z.array(z.number()),
  retentionSeconds: z.number(),
  maxRetryWindowSeconds: z.number(),
  maxRetryWindowSource: z.string(),
  lateThresholdSeconds: z.number().meta({
    description:
      "latestLate and tenants[].late count effects whose longest gap exceeds this (the retry window); advice.comparison.lateDuplicates counts deliveries beyond the retention instead",
  }),
  all: gapSeries,
  jobTypes: z.array(gapSeries),
  tenants: z.array(tenantGaps),
  daily: z.array(gapDay),
  latestLate: z.array(lateDuplicate),
  effectsMaxGap: z.object({ seconds: z.number(), jobType: z.string(), tenant: z.string(), key: z.string() }).nullable(),
  claimsBeyondRetention: z.number(),
  advice,
  jobTypeOptions: z.array(z.string()).meta({ description: "Job types with gap data in the last 90 days" }),
});
export type Gaps = z.infer<typeof gapsResponse>;
