import { z } from "zod";
import { bigintId } from "../fields";
import { fromBeforeTo, instant, listingFields, nextCursor, tenantParam } from "./common";

/** The contract of GET /api/v1/audit: its query and its answer. */

export const auditQuery = z
  .object({
    tenant: tenantParam,
    cursor: bigintId.optional().meta({ description: "nextCursor of the previous page" }),
    ...listingFields({ max: 500, default: 100 }),
  })
  .superRefine(fromBeforeTo);

export const auditRow = z.object({
  id: z.string(),
  at: instant,
  tokenId: z.string().nullable(),
  actor: z.string(),
  tenantId: z.string().nullable(),
  action: z.string(),
  target: z.string().nullable(),
  result: z.string(),
  detail: z.unknown(),
  ip: z.string().nullable(),
});
export type AuditRow = z.infer<typeof auditRow>;

export const auditResponse = z.object({ entries: z.array(auditRow), nextCursor });
export type AuditResponse = z.infer<typeof auditResponse>;
