import { z } from "zod";
import { BULK_ACTION_KINDS, BULK_ACTION_STATES } from "../auth/bulk-types";
import { safeText } from "../fields";
import { instant, nullableInstant } from "./common";

/** The contract of /api/v1/bulk: the release's body, the action's path and the answers. */

/** POST /api/v1/bulk/release body: the Keys page's filter (tenant for platform admins), and whether only to count. */
export const bulkReleaseBody = z
  .object({
    tenant: safeText(255, 1).optional(),
    q: safeText(255).optional(),
    jobType: safeText(255, 1).optional(),
    dryRun: z.boolean().default(false),
  })
  .strict();

/** /api/v1/bulk/{id}: a bulk action's id (a UUID). */
export const bulkIdPath = z.object({
  id: z
    .string()
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be a UUID")
    .transform((value) => value.toLowerCase()),
});

export const stuckClaimSample = z.object({
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

export const bulkActionView = z.object({
  id: z.string(),
  kind: z.enum(BULK_ACTION_KINDS),
  tenant: z.string(),
  filter: z.object({ q: z.string().nullable(), jobType: z.string().nullable() }),
  state: z.enum(BULK_ACTION_STATES),
  total: z.number().int(),
  processed: z.number().int(),
  /** Items the action did (released); processed − applied were refused (e.g. a worker took the claim over meanwhile). */
  applied: z.number().int(),
  actor: z.string(),
  createdAt: instant,
  startedAt: nullableInstant,
  finishedAt: nullableInstant,
  cancelledBy: z.string().nullable(),
  error: z.string().nullable(),
});

export const bulkActionResponse = z.object({ action: bulkActionView });

/** POST /api/v1/bulk/release: a dry run's count, or the action it started. */
export const bulkReleaseResponse = z.union([bulkDryRunResponse, bulkActionResponse]);
