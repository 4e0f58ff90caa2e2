import { z } from "zod";
import { isoInstant, safeText } from "../fields";

/**
 * What every route family's contract shares: the tenant parameter, time and cursor fields of
 * responses. A response time is an ISO 8601 instant with an offset, as
 * Date.toISOString and PostgreSQL's to_json write them.
 */
export const instant = z.iso.datetime({ offset: true });
export const nullableInstant = instant.nullable();

/** ?tenant=: platform tokens name the tenant; a tenant token always reads its own. */
export const tenantParam = safeText(255, 1)
  .optional()
  .meta({ description: "Platform tokens only (required for them on /effects); a tenant token always reads its own tenant." });

/** Pass as ?cursor= for the next (older) page; null on the last page. */
export const nextCursor = z
  .string()
  .nullable()
  .meta({ description: "The next page's ?cursor= (opaque); null on the last page." });

/**
 * ?cursor= of every list: opaque, the nextCursor of the previous page of the same list. Its parts
 * are validated where the list reads it (lib/console/keyset.ts): one this API never returned, or
 * another list's, is a 400 naming the cursor.
 */
export const cursorParam = safeText(1000, 1).optional().meta({
  description:
    "Opaque: the nextCursor of the previous page of this list, with the same filters. Pages never repeat or skip a row, even while rows are added.",
});

/** A listing's window and page: from/to (ISO 8601), a cursor from the previous page, a page size. */
export const listingFields = (limit: { max: number; default: number }) => ({
  from: isoInstant.optional().meta({ description: "Default: 90 days ago" }),
  to: isoInstant.optional(),
  limit: z.coerce.number().int().min(1).max(limit.max).default(limit.default),
});

/** The refinement every listing shares: a window's from comes before its to. */
export function fromBeforeTo(v: { from?: Date; to?: Date }, ctx: z.RefinementCtx): void {
  if (v.from && v.to && v.from >= v.to) ctx.addIssue({ code: "custom", message: "must be before to", path: ["from"] });
}
