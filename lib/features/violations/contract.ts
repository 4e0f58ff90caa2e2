import { z } from "zod";
import { cursorParam, fromBeforeTo, instant, listingFields, nextCursor, tenantParam } from "../../console/common-contract";
import { safeText } from "../../fields";

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

/** GET /api/v1/violations query (and the Violations page's URL). */
export const violationsQuery = z
  .object({
    tenant: tenantParam,
    jobType: safeText(255, 1).optional(),
    constraint: safeText(255, 1).optional().meta({ description: "The violated constraint's name" }),
    cursor: cursorParam,
    ...listingFields({ max: 200, default: 50 }),
  })
  .superRefine(fromBeforeTo);

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
