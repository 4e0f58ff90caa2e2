import { z } from "zod";
import { instant, tenantParam } from "../../console/common-contract";
import { isoTime, safeText } from "../../fields";
import { violationGroup } from "../violations/contract";
import { DEFAULT_CHART_WIDTH, OVERVIEW_RANGES } from "./overview-types";

/** The contract of GET /api/v1/overview: its query (the Overview page parses its URL with it too) and its answer. */

const MAX_RANGE_SECONDS = 90 * 86_400;

/**
 * `window` (a preset) or `from` + `to` (ISO 8601), `jobType`, `tenant`, and `width` (the chart's
 * width in pixels, which sets the step).
 */
export const overviewQuery = z
  .object({
    window: z.enum(OVERVIEW_RANGES).optional(),
    from: isoTime.optional().meta({ description: "With to: a custom range instead of window" }),
    to: isoTime.optional(),
    jobType: safeText(255, 1).optional(),
    tenant: tenantParam,
    width: z.coerce
      .number()
      .int()
      .min(100)
      .max(4000)
      .default(DEFAULT_CHART_WIDTH)
      .meta({ description: "Chart width in px: bounds the points asked for" }),
  })
  .superRefine((q, ctx) => {
    if ((q.from === undefined) !== (q.to === undefined)) {
      ctx.addIssue({ code: "custom", path: [q.from === undefined ? "from" : "to"], message: "from and to go together" });
      return;
    }
    if (q.from !== undefined && q.window !== undefined)
      ctx.addIssue({ code: "custom", path: ["window"], message: "give either window or from/to, not both" });
    if (q.from !== undefined && q.to !== undefined) {
      const span = Date.parse(q.to) - Date.parse(q.from);
      if (span <= 0) ctx.addIssue({ code: "custom", path: ["to"], message: "must be after from" });
      else if (span > MAX_RANGE_SECONDS * 1000)
        ctx.addIssue({ code: "custom", path: ["to"], message: "range is longer than 90 days" });
    }
  });
export type OverviewQuery = z.infer<typeof overviewQuery>;

const points = z.array(z.number().nullable());
const metricsSource = z.enum(["postgres", "mysql", "prometheus"]);
export type MetricsSourceName = z.infer<typeof metricsSource>;

/** One line of a chart: a value per timestamp of the series' timestamps. */
const series = z.object({ name: z.string(), values: points });
export type Series = z.infer<typeof series>;
const violationSeries = series.extend({ jobType: z.string(), constraint: z.string() });
export type ViolationSeries = z.infer<typeof violationSeries>;

/** Buckets a series is counted in: each point counts the events of (t - step, t]. */
const seriesBuckets = z.object({
  stepSeconds: z.number().meta({ description: "Seconds per point; each point counts the events in (t - step, t]" }),
  timestamps: z.array(z.number()).meta({ description: "End of each bucket, epoch milliseconds" }),
});
export type SeriesBuckets = z.infer<typeof seriesBuckets>;

const overviewSeries = z.object({
  ...seriesBuckets.shape,
  suppressionBuckets: seriesBuckets.meta({
    description:
      "The buckets `suppressions` is counted in: stepSeconds and timestamps, except for one tenant, whose suppressions are only counted per hour (then a point per hour at least)",
  }),
  suppressions: z
    .array(series)
    .meta({ description: "Duplicate suppressions per bucket of suppressionBuckets, one series per job type" }),
  violations: z.array(violationSeries),
  claimRate: points.meta({ description: "Claims per second" }),
  latencyP50: points.meta({ description: "Claim latency quantiles, seconds (null where no claim happened)" }),
  latencyP99: points,
  inFlight: points,
  takeovers: points,
});
export type OverviewSeries = z.infer<typeof overviewSeries>;

const jobTypeActivity = z.object({
  jobType: z.string(),
  deliveries: z.number().nullable().meta({ description: "Null when withheld (a tenant session: the rollups carry no tenant)" }),
  redeliveries: z.number().nullable(),
  suppressions: z.number(),
  claims: z.number().nullable(),
  uncaughtViolations: z.number(),
  notWiredUp: z.boolean().meta({ description: "Redeliveries and no suppressions over the range: the guard is probably missing" }),
});
export type JobTypeActivity = z.infer<typeof jobTypeActivity>;
/** A job type's activity as a metrics source counts it: every figure present (the response withholds some from a tenant). */
export type FleetJobTypeActivity = JobTypeActivity & { deliveries: number; redeliveries: number; claims: number };

const tenantRow = z.object({ tenant: z.string(), suppressions: z.number(), violations: z.number(), stuck: z.number() });
export type TenantRow = z.infer<typeof tenantRow>;

const stuckClaim = z.object({
  tenant: z.string(),
  key: z.string(),
  jobType: z.string(),
  attempt: z.number().int(),
  owner: z.string().nullable(),
  createdAt: instant,
  leaseUntil: instant,
  ageSeconds: z.number().meta({ description: "Seconds since the claim was created" }),
  overdueSeconds: z.number().meta({ description: "Seconds since its lease ran out" }),
});
export type StuckClaim = z.infer<typeof stuckClaim>;

const alertState = z.enum(["firing", "pending", "inactive", "unknown"]);
export type AlertStateName = z.infer<typeof alertState>;

const alertStatus = z.object({
  name: z.string(),
  state: alertState,
  severity: z.string(),
  summary: z.string(),
  instances: z.array(z.object({ labels: z.record(z.string(), z.string()), state: alertState, value: z.number().nullable() })),
  runbook: z.string().meta({ description: "docs/operations.md section for this alert" }),
  note: z.string().optional().meta({ description: "Why the state is unknown" }),
});
export type AlertStatus = z.infer<typeof alertStatus>;

export const overviewResponse = z.object({
  source: metricsSource,
  range: z.enum(OVERVIEW_RANGES).nullable().meta({ description: "The preset, or null for a custom from/to" }),
  from: instant,
  to: instant,
  jobType: z.string().nullable(),
  jobTypeKnown: z
    .boolean()
    .meta({ description: "False when jobType names a job type no worker ever reported (a typo in the URL, most likely)" }),
  tenant: z.string().nullable(),
  series: overviewSeries,
  tenantScoped: z.array(z.string()).meta({ description: "Which parts honour ?tenant=" }),
  jobTypes: z.array(jobTypeActivity),
  topTenants: z.array(tenantRow),
  stuck: z.array(stuckClaim),
  violationGroups: z.array(violationGroup),
  alerts: z.array(alertStatus),
  alertsSource: metricsSource,
  totals: z.object({
    deliveries: z.number().nullable().meta({ description: "Null when withheld (see withheld)" }),
    redeliveries: z.number().nullable(),
    claims: z.number().nullable(),
    suppressions: z.number(),
    uncaughtViolations: z.number(),
    stuck: z.number(),
  }),
  notes: z.array(z.string()).meta({ description: "Sentences explaining numbers that cannot agree" }),
  withheld: z.array(z.string()).meta({
    description:
      "Parts left out for a tenant session because they can only be answered for every tenant (the rollups, alert rules and claim charts carry no tenant): totals.deliveries, totals.redeliveries, totals.claims, jobTypes.deliveries, jobTypes.redeliveries, jobTypes.claims, series.claimRate, series.latency, series.waits, alerts",
  }),
  unflushed: z
    .object({
      workers: z.number().int().meta({ description: "Workers that stopped without a clean shutdown in the range" }),
      lastHeartbeat: instant.nullable(),
      violationsMissingFromRollups: z.number().int().nullable().meta({
        description:
          "Uncaught violations recorded one by one but absent from the rollups (every violation count here is from the rows); null for a tenant",
      }),
    })
    .meta({ description: "What the rollup figures may be missing because workers died before flushing" }),
});
export type OverviewResponse = z.infer<typeof overviewResponse>;
