import { z } from "zod";
import { EFFECT_STATUSES } from "../console/effects-types";

const instant = z
  .string()
  .max(40)
  .refine(
    (v) => !Number.isNaN(Date.parse(v)) && /^\d{4}-\d{2}-\d{2}/.test(v),
    "must be an ISO 8601 time like 2026-12-01T00:00:00Z",
  )
  .transform((v) => new Date(v));

// PostgreSQL text cannot hold NUL; no tenant, key or job type contains a control character.
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const CONTROL_FREE = /^[^\u0000-\u001f\u007f]*$/;
const text = (max: number) => z.string().max(max).regex(CONTROL_FREE, "must not contain control characters");

const tenant = text(255).min(1).optional();

/** ?tenant= (platform tokens only; ignored for tenant tokens). */
export const tenantQuery = z.object({ tenant });

/** GET /api/v1/effects query. */
export const effectSearchQuery = z
  .object({
    tenant,
    q: text(255).optional(),
    status: z.enum(EFFECT_STATUSES).optional(),
    jobType: text(255).min(1).optional(),
    from: instant.optional(),
    to: instant.optional(),
    cursor: z.string().min(1).max(1000).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  })
  .refine((v) => !v.from || !v.to || v.from < v.to, { message: "must be before to", path: ["from"] });

/** GET /api/v1/audit query. */
export const auditQuery = z
  .object({
    tenant,
    from: instant.optional(),
    to: instant.optional(),
    cursor: z.string().min(1).max(200).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
  })
  .refine((v) => !v.from || !v.to || v.from < v.to, { message: "must be before to", path: ["from"] });

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
