import { z } from "zod";
import { cursorParam, instant, nextCursor, nullableInstant } from "../../console/common-contract";
import { safeText } from "../../fields";
import { findingFilterFields, findingStateBody, findingSummary, fromBeforeTo } from "../reconciliation/contract";
import { BULK_ACTION_KINDS, BULK_ACTION_STATES, BULK_ITEM_STATUSES } from "./bulk-types";

/** The contract of /api/v1/bulk: the release's and the acknowledge's bodies, the action's path and the answers. */

/** POST /api/v1/bulk/release body: the Keys page's filter (tenant for platform admins), and whether only to count. */
export const bulkReleaseBody = z
  .object({
    tenant: safeText(255, 1).optional(),
    q: safeText(255).optional(),
    jobType: safeText(255, 1).optional(),
    dryRun: z.boolean().default(false),
  })
  .strict();

/**
 * POST /api/v1/bulk/acknowledge-findings body: the Reconciliation page's filter (its open findings;
 * a platform token without a tenant spans every tenant), the note kept with each finding, and
 * whether only to count. The note is the single acknowledge's (required unless dryRun).
 */
export const bulkAcknowledgeBody = z
  .object({
    ...findingFilterFields,
    note: findingStateBody.shape.note.optional(),
    dryRun: z.boolean().default(false),
  })
  .strict()
  .refine(...fromBeforeTo())
  .refine((v) => v.dryRun || v.note !== undefined, {
    message: "is required to acknowledge (kept with each finding and in the audit log)",
    path: ["note"],
  });

/** /api/v1/bulk/{id}: a bulk action's id (a UUID). */
export const bulkIdPath = z.object({
  id: z
    .string()
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be a UUID")
    .transform((value) => value.toLowerCase()),
});

const stuckClaimSample = z.object({
  key: z.string(),
  jobType: z.string(),
  attempt: z.number().int(),
  owner: z.string().nullable(),
  leaseUntil: instant,
});

/** POST /api/v1/bulk/release with dryRun: what would be released, and whether the cap allows it. */
export const bulkDryRunResponse = z.object({
  dryRun: z.literal(true),
  tenant: z.string(),
  /** How many stuck claims match (counted up to cap + 1: "more than the cap" is all that matters past it). */
  count: z.number().int(),
  cap: z.number().int(),
  overCap: z.boolean(),
  sample: z.array(stuckClaimSample),
});

/** POST /api/v1/bulk/acknowledge-findings with dryRun: what would be acknowledged, and whether the cap allows it. */
export const bulkAcknowledgeDryRunResponse = z.object({
  dryRun: z.literal(true),
  tenant: z.string().nullable().meta({ description: "The tenant matched, or null for every tenant (platform tokens)" }),
  /** How many open findings match (counted up to cap + 1). */
  count: z.number().int(),
  cap: z.number().int(),
  overCap: z.boolean(),
  sample: z.array(findingSummary),
});

const bulkActionViewSchema = z.object({
  id: z.string(),
  kind: z.enum(BULK_ACTION_KINDS),
  tenant: z.string().nullable().meta({ description: "null: a platform action over every tenant's findings" }),
  filter: z.record(z.string(), z.string().nullable()).meta({
    description:
      "The filter as it was given: q and jobType (release_stuck_claims); kind, provider, jobType, from and to (acknowledge_findings)",
  }),
  note: z.string().nullable().meta({ description: "acknowledge_findings: the note kept with each finding" }),
  state: z.enum(BULK_ACTION_STATES),
  total: z.number().int(),
  processed: z.number().int(),
  /** Items the action did (released, acknowledged); processed − applied were refused (a worker took the claim over, a finding was resolved meanwhile). */
  applied: z.number().int(),
  actor: z.string(),
  createdAt: instant,
  startedAt: nullableInstant,
  finishedAt: nullableInstant,
  cancelledBy: z.string().nullable(),
  error: z.string().nullable(),
});

export const bulkActionResponse = z.object({ action: bulkActionViewSchema });

/** The most items one page of GET /api/v1/bulk/{id}/items holds. */
const BULK_ITEMS_PAGE_MAX = 1000;

/** GET /api/v1/bulk/{id}/items query: a page at a time, in the order the items run. */
export const bulkItemsQuery = z.object({
  cursor: cursorParam,
  limit: z.coerce.number().int().min(1).max(BULK_ITEMS_PAGE_MAX).default(100),
});

/** One item of a bulk action: a key (a stuck claim's, a finding's id) and what applying it came to. */
const bulkItemView = z.object({
  seq: z.number().int().meta({ description: "Its place in the run, from 1: the list's order" }),
  key: z.string(),
  status: z.enum(BULK_ITEM_STATUSES).meta({
    description: "pending: not yet applied; applied: done (released, acknowledged); refused: the guards said no (see error)",
  }),
  error: z.string().nullable().meta({ description: "refused: why (lease_alive, resolved, …); else null" }),
  doneAt: nullableInstant,
});

export const bulkItemsResponse = z.object({ items: z.array(bulkItemView), nextCursor });

/** What /api/v1/bulk answers, inferred from its schemas. */
export type StuckClaimSample = z.infer<typeof stuckClaimSample>;
/** POST /api/v1/bulk/release with dryRun: what would be released, and whether the cap allows it. */
export type BulkDryRunResponse = z.infer<typeof bulkDryRunResponse>;
/** POST /api/v1/bulk/acknowledge-findings with dryRun: what would be acknowledged, and whether the cap allows it. */
export type BulkAcknowledgeDryRunResponse = z.infer<typeof bulkAcknowledgeDryRunResponse>;
export type BulkActionView = z.infer<typeof bulkActionViewSchema>;
export type BulkActionResponse = z.infer<typeof bulkActionResponse>;
export type BulkItemView = z.infer<typeof bulkItemView>;
/** GET /api/v1/bulk/{id}/items: a page of the action's items, in the order they run. */
export type BulkItemsResponse = z.infer<typeof bulkItemsResponse>;
