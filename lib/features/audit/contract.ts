import { z } from "zod";
import { cursorParam, fromBeforeTo, instant, listingFields, nextCursor, tenantParam } from "../../console/common-contract";
import { isoInstant, safeText } from "../../fields";

/** The contract of GET /api/v1/audit, /audit/export and /audit/integrity: their queries and answers. */

/** The audit log's filters, shared by the listing, the export and the Audit log page. */
const auditFilterFields = {
  tenant: tenantParam,
  actor: safeText(255, 1)
    .optional()
    .meta({ description: 'Part of the actor\'s name, case-insensitive ("oncall" finds "oncall (…a1b2c3)")' }),
  action: safeText(100, 1)
    .optional()
    .meta({ description: 'An action, or its family with a trailing dot: "effect.release", "token."' }),
  target: safeText(1000, 1)
    .optional()
    .meta({ description: "Exactly what a row names: an effect key, a token's id, a session's public id" }),
};

export const auditQuery = z
  .object({
    ...auditFilterFields,
    cursor: cursorParam,
    ...listingFields({ max: 500, default: 100 }),
  })
  .superRefine(fromBeforeTo);

const AUDIT_EXPORT_FORMATS = ["csv", "ndjson"] as const;

/** GET /api/v1/audit/export query: the page's filters, and the file's format. */
export const auditExportQuery = z
  .object({
    ...auditFilterFields,
    from: isoInstant.optional(),
    to: isoInstant.optional(),
    format: z.enum(AUDIT_EXPORT_FORMATS).default("csv"),
  })
  .superRefine(fromBeforeTo);

const auditRowSchema = z.object({
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
  /**
   * On a row whose result is `requested` (a write on a MySQL effects store, audited before it was
   * tried, docs/operations.md): the result recorded after it under the same request id, or
   * `unknown` when none was (the console lost the answer, or died before recording it).
   */
  outcome: z.string().optional(),
});
export type AuditRow = z.infer<typeof auditRowSchema>;

export const auditResponse = z.object({ entries: z.array(auditRowSchema), nextCursor });
export type AuditResponse = z.infer<typeof auditResponse>;

/** GET /api/v1/audit/integrity: whether the audit log's hash chain holds, as the Audit log page shows it. */
export const auditIntegrityView = z.object({
  /** checking: the first walk of a large log has not reached its end yet. */
  state: z.enum(["ok", "broken", "checking"]),
  /** Rows found to fit (platform admins only). */
  rowsChecked: z.number().int().nullable(),
  checkedAt: instant.nullable(),
  problem: z.string().nullable(),
});
export type AuditIntegrityView = z.infer<typeof auditIntegrityView>;
