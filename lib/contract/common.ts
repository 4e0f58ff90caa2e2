import { z } from "zod";
import { safeText } from "../fields";

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
export const nextCursor = z.string().nullable();
