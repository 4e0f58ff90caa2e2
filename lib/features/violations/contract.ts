import { z } from "zod";
import { cursorParam, fromBeforeTo, instant, listingFields, nextCursor, tenantParam } from "../../console/common-contract";
import { safeText } from "../../fields";
import { VIOLATION_TOTALS_GROUP_LIMIT } from "./violations-types";

/** The contract of GET /api/v1/violations: its query and its answer. */

/** One uncaught unique violation: the key it hit, when, and the handler's (redacted) error. */
export const listedViolation = z.object({
  id: z.string(),
  occurredAt: instant,
  tenant: z.string(),
  jobType: z.string(),
  constraint: z.string(),
  key: z.string(),
  messageId: z.string().nullable(),
  message: z.string().nullable().meta({ description: "The handler's database error, after the redaction hook" }),
});
export type ListedViolation = z.infer<typeof listedViolation>;

/** The list's filter, which its totals share: whose violations, of which job type and constraint, when. */
const violationFilterFields = {
  tenant: tenantParam,
  jobType: safeText(255, 1).optional(),
  constraint: safeText(255, 1).optional().meta({ description: "The violated constraint's name" }),
  from: listingFields({ max: 200, default: 50 }).from,
  to: listingFields({ max: 200, default: 50 }).to,
};

/** GET /api/v1/violations query (and the Violations page's URL). */
export const violationsQuery = z
  .object({
    ...violationFilterFields,
    cursor: cursorParam,
    limit: listingFields({ max: 200, default: 50 }).limit,
  })
  .superRefine(fromBeforeTo);

/** GET /api/v1/violations/groups query: the list's filter, without its page. */
export const violationTotalsQuery = z.object(violationFilterFields).superRefine(fromBeforeTo);

/** GET /api/v1/violations: newest first; `nextCursor` asks for the next (older) page. */
export const violationListResponse = z.object({
  tenant: z.string().nullable().meta({ description: "The tenant listed, or null for every tenant (platform sessions)" }),
  violations: z.array(listedViolation),
  nextCursor,
});
export type ViolationListResponse = z.infer<typeof violationListResponse>;

/** The Overview banner's line: one (tenant, job type, constraint) group over the range. */
export const violationGroup = z.object({
  tenant: z.string(),
  jobType: z.string(),
  constraint: z.string(),
  count: z.number().int().meta({ description: "Violations in the group" }),
  keys: z.number().int().meta({ description: "Distinct keys among them" }),
  lastSeen: instant,
});
export type ViolationGroup = z.infer<typeof violationGroup>;

/**
 * GET /api/v1/violations/groups: the totals of the list with the same filter, per (tenant, job
 * type, constraint). `total` counts every row the list pages through.
 */
export const violationTotalsResponse = z.object({
  tenant: z.string().nullable().meta({ description: "The tenant counted, or null for every tenant (platform sessions)" }),
  from: instant,
  to: instant,
  total: z.number().int().meta({ description: "Every violation of the filter: the rows GET /api/v1/violations pages through" }),
  groupCount: z.number().int().meta({ description: "How many (tenant, job type, constraint) groups there are in all" }),
  groups: z
    .array(violationGroup)
    .meta({ description: `The groups with the most violations first (at most ${VIOLATION_TOTALS_GROUP_LIMIT})` }),
});
export type ViolationTotalsResponse = z.infer<typeof violationTotalsResponse>;
