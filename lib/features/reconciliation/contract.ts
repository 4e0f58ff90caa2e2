import { z } from "zod";
import { cursorParam, instant, nextCursor, nullableInstant } from "../../console/common-contract";
import { bigintId, isoInstant, safeText } from "../../fields";
import { FINDING_KINDS, FINDING_STATES, RUN_STATUSES } from "./reconciliation-types";

/**
 * The contract of /api/v1/reconciliation/runs and /api/v1/reconciliation/findings (list, detail,
 * acknowledge, resolve): queries, path, bodies and answers. The Reconciliation page parses its URL
 * with the same findingsQuery.
 */

const tenant = safeText(255, 1)
  .optional()
  .meta({ description: "Platform tokens only; a tenant token always reads its own tenant." });
const provider = safeText(100, 1).meta({ description: 'A configured provider ("stripe", "mailer")' });
const kind = z.enum(FINDING_KINDS);
const state = z.enum(FINDING_STATES);

/**
 * Which findings a filter names (besides their state): the findings list's query and the bulk
 * acknowledge's body (lib/features/bulk-actions/contract.ts) take the same fields.
 */
export const findingFilterFields = {
  tenant,
  kind: kind.optional(),
  provider: provider.optional(),
  jobType: safeText(255, 1).optional(),
  from: isoInstant.optional().meta({ description: "Findings last seen at or after" }),
  to: isoInstant.optional().meta({ description: "Findings last seen before" }),
};

/** A findings filter's window reads forwards (a refinement: `.refine(...fromBeforeTo())`). */
export const fromBeforeTo = (): [(v: { from?: Date; to?: Date }) => boolean, { message: string; path: string[] }] => [
  (v) => !v.from || !v.to || v.from < v.to,
  { message: "must be before to", path: ["from"] },
];

/** GET /api/v1/reconciliation/findings query (and the Reconciliation page's URL). */
export const findingsQuery = z
  .object({
    ...findingFilterFields,
    state: state.default("open"),
    cursor: cursorParam,
    limit: z.coerce.number().int().min(1).max(200).default(50),
    // The page's open finding (UI state in the same URL); the API ignores it.
    finding: bigintId.optional().meta({ description: "The console page's open finding; the API ignores it" }),
  })
  .refine(...fromBeforeTo());

/**
 * GET /api/v1/reconciliation/runs query: every run, or one provider's, or (windowFrom with
 * windowTo) the runs of one window, reruns included: what the Reconciliation page unfolds under a
 * window's latest run.
 */
export const runsQuery = z
  .object({
    provider: provider.optional(),
    windowFrom: isoInstant.optional().meta({ description: "Only runs of the window starting at this instant (with windowTo)" }),
    windowTo: isoInstant.optional().meta({ description: "Only runs of the window ending at this instant (with windowFrom)" }),
    cursor: cursorParam,
    limit: z.coerce.number().int().min(1).max(200).default(20),
  })
  .refine((v) => (v.windowFrom === undefined) === (v.windowTo === undefined), {
    message: "windowFrom and windowTo name one window: give both or neither",
    path: ["windowTo"],
  })
  .refine((v) => !v.windowFrom || !v.windowTo || v.windowFrom < v.windowTo, {
    message: "must be before windowTo",
    path: ["windowFrom"],
  });

/** GET /api/v1/reconciliation/windows query. */
export const windowsQuery = z.object({
  provider: provider.optional(),
  cursor: cursorParam,
  limit: z.coerce.number().int().min(1).max(200).default(20),
});

/** The {id} of /api/v1/reconciliation/findings/{id}: a positive bigint, as the findings list returned it. */
export const findingIdPath = z.object({
  id: bigintId.meta({ description: "A finding's id, as the findings list returned it" }),
});

/** POST …/findings/{id}/acknowledge and …/resolve body: why (kept with the finding and in the audit log). */
export const findingStateBody = z.object({ note: safeText(2000, 1) });

/** The longest window one API request may start (a day at a time is what the scheduler does too). */
const MAX_RUN_WINDOW_DAYS = 7;

/** POST /api/v1/reconciliation/runs body. */
export const startRunBody = z
  .object({ provider, from: isoInstant, to: isoInstant })
  .refine((v) => v.from < v.to, { message: "must be before to", path: ["from"] })
  .refine((v) => v.to.getTime() - v.from.getTime() <= MAX_RUN_WINDOW_DAYS * 86_400_000, {
    message: `the window must be at most ${MAX_RUN_WINDOW_DAYS} days`,
    path: ["to"],
  });

/** One reconciliation run: a provider, a window of creation time, how far it got and what it found. */
const reconciliationRun = z.object({
  id: z.string(),
  provider: z.string(),
  windowFrom: instant,
  windowTo: instant,
  graceSeconds: z.number(),
  status: z.enum(RUN_STATUSES),
  trigger: z.string(),
  requestedBy: z.string().nullable(),
  startedAt: instant,
  finishedAt: nullableInstant,
  heartbeatAt: nullableInstant,
  durationSeconds: z.number().meta({ description: "Seconds from start to finish, or to now for a running one" }),
  objectsSeen: z.number().int().nullable().meta({ description: "Over every tenant; null for a tenant scope" }),
  effectsSeen: z.number().int().nullable().meta({ description: "Over every tenant; null for a tenant scope" }),
  matched: z.number().int().nullable().meta({ description: "Over every tenant; null for a tenant scope" }),
  counts: z
    .record(kind, z.number().int())
    .nullable()
    .meta({ description: "Findings per kind over every tenant; null for a tenant scope (those counts span tenants)" }),
  error: z.string().nullable(),
});
export type ReconciliationRun = z.infer<typeof reconciliationRun>;

export const reconciliationRunListResponse = z.object({ runs: z.array(reconciliationRun), nextCursor });
export type ReconciliationRunListResponse = z.infer<typeof reconciliationRunListResponse>;

/**
 * A provider's window as the runs left it: its latest run (what the window's findings now rest on)
 * and how many runs it had in all. A rerun of a window updates its findings, never adds a second
 * window: reruns are folded under the latest.
 */
const reconciliationWindow = z.object({
  provider: z.string(),
  windowFrom: instant,
  windowTo: instant,
  runCount: z.number().int().min(1).meta({ description: "The window's runs, the latest included" }),
  latest: reconciliationRun,
});
export type ReconciliationWindow = z.infer<typeof reconciliationWindow>;

export const reconciliationWindowListResponse = z.object({ windows: z.array(reconciliationWindow), nextCursor });
export type ReconciliationWindowListResponse = z.infer<typeof reconciliationWindowListResponse>;

/** POST /api/v1/reconciliation/runs answers 202 with the run it started. */
export const startRunResponse = z.object({ run: reconciliationRun });

/**
 * What the step's outcome recorded of the provider's object (`providerOutcome(object)`): the
 * fields the reconciler compares with the provider's own, read from the redacted outcome.
 */
const findingRecorded = z.object({
  objectId: z.string().nullable().meta({ description: "The outcome's provider_object_id" }),
  amount: z.number().nullable().meta({ description: "In the currency's smallest unit, as the provider counts it" }),
  currency: z.string().nullable(),
  status: z.string().nullable(),
});

/** Our side of a finding: the effect as Onceboard recorded it (its outcome after the redaction hook). */
const findingOurs = z.object({
  key: z.string().nullable(),
  status: z.string().nullable(),
  attempts: z.number().int().nullable(),
  outcome: z.unknown(),
  recorded: findingRecorded,
  providerKey: z.string().nullable(),
  createdAt: nullableInstant,
});
export type FindingOurs = z.infer<typeof findingOurs>;

/** One provider object of a finding, as the provider returned it. */
const findingTheirs = z.object({
  id: z.string(),
  url: z
    .string()
    .nullable()
    .meta({ description: "The provider's own page for this object (its objectUrl in the providers file), or null" }),
  amount: z.number().nullable().meta({ description: "In the currency's smallest unit, as the provider counts it" }),
  currency: z.string().nullable(),
  status: z.string().nullable(),
  created: nullableInstant,
});
export type FindingTheirs = z.infer<typeof findingTheirs>;

/** A finding as the list shows it. */
export const findingSummary = z.object({
  id: z.string(),
  provider: z.string(),
  kind,
  tenant: z.string().nullable(),
  jobType: z.string().nullable(),
  effectKey: z.string().nullable(),
  providerObjectIds: z.array(z.string()),
  detail: z.string(),
  firstSeenAt: instant,
  lastSeenAt: instant,
  state,
});
export type FindingSummary = z.infer<typeof findingSummary>;

/** A finding with both sides, and what an operator said about it. */
export const findingDetail = findingSummary.extend({
  ours: findingOurs.nullable(),
  theirs: z.array(findingTheirs),
  firstRunId: z.string().nullable(),
  lastRunId: z.string().nullable(),
  stateNote: z.string().nullable(),
  stateChangedBy: z.string().nullable(),
  stateChangedAt: nullableInstant,
});
export type FindingDetail = z.infer<typeof findingDetail>;

export const findingListResponse = z.object({
  tenant: z.string().nullable().meta({ description: "The tenant listed, or null for every tenant (platform sessions)" }),
  findings: z.array(findingSummary),
  nextCursor,
});
export type FindingListResponse = z.infer<typeof findingListResponse>;

export const findingStateResponse = z.object({ finding: findingDetail, message: z.string() });
export type FindingStateResponse = z.infer<typeof findingStateResponse>;
