import { z } from "zod";
import { EFFECT_STATUSES } from "../console/effects-types";
import { bigintId, isoInstant as instant, safeText as text } from "../fields";

const tenant = text(255, 1).optional();

/** ?tenant= (platform tokens only; ignored for tenant tokens). */
export const tenantQuery = z.object({ tenant });

/** GET /api/v1/effects query. */
export const effectSearchQuery = z
  .object({
    tenant,
    q: text(255).optional(),
    status: z.enum(EFFECT_STATUSES).optional(),
    jobType: text(255, 1).optional(),
    from: instant.optional(),
    to: instant.optional(),
    cursor: text(1000, 1).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  })
  .refine((v) => !v.from || !v.to || v.from < v.to, { message: "must be before to", path: ["from"] });

/** GET /api/v1/audit query. */
const auditFilterFields = {
  tenant,
  /** Part of the actor's name, case-insensitive ("oncall" finds "oncall (…a1b2c3)"). */
  actor: text(255, 1).optional(),
  /** An action, or its family with a trailing dot: "effect.release", "token." */
  action: text(100, 1).optional(),
  /** Exactly what a row names: an effect key, a token's id, a session's public id. */
  target: text(1000, 1).optional(),
  from: instant.optional(),
  to: instant.optional(),
};
const fromBeforeTo: [(v: { from?: Date; to?: Date }) => boolean, { message: string; path: string[] }] = [
  (v) => !v.from || !v.to || v.from < v.to,
  { message: "must be before to", path: ["from"] },
];

export const auditQuery = z
  .object({
    ...auditFilterFields,
    cursor: bigintId.optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
  })
  .refine(...fromBeforeTo);

export const AUDIT_EXPORT_FORMATS = ["csv", "ndjson"] as const;

/** GET /api/v1/audit/export query: the page's filters, and the file's format. */
export const auditExportQuery = z
  .object({ ...auditFilterFields, format: z.enum(AUDIT_EXPORT_FORMATS).default("csv") })
  .refine(...fromBeforeTo);

/** GET /api/v1/violations query (and the Violations page's URL). */
export const violationsQuery = z
  .object({
    tenant,
    jobType: text(255).min(1).optional(),
    constraint: text(255).min(1).optional(),
    from: instant.optional(),
    to: instant.optional(),
    cursor: z.string().min(1).max(1000).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  })
  .refine((v) => !v.from || !v.to || v.from < v.to, { message: "must be before to", path: ["from"] });
