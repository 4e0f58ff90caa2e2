import { z } from "zod";
import { isoInstant, safeText } from "../fields";
import { ROLES } from "./auth-types";

/** The id in /api/v1/tokens/{id}/revoke and /api/v1/sessions/{id}/revoke: a UUID (a token's id, a session's public id). */
export const adminId = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be a UUID")
  .transform((value) => value.toLowerCase());

/** POST /api/v1/tokens body. `tenant` omitted: the caller's tenant (a platform admin: a platform token); null: a platform token. */
export const createTokenBody = z
  .object({
    name: safeText(100, 1),
    role: z.enum(ROLES),
    tenant: z
      .string()
      .regex(/^[^\s]{1,255}$/, "must be 1-255 characters without spaces")
      .pipe(safeText(255, 1))
      .nullable()
      .optional(),
    expiresAt: isoInstant.nullable().optional(),
  })
  .strict();

/** GET /api/v1/tokens and /api/v1/sessions query: a platform admin may narrow to one tenant. */
export const adminListQuery = z.object({ tenant: safeText(255, 1).optional() });

/** POST /api/v1/bulk/release body: the Keys page's filter (tenant for platform admins), and whether only to count. */
export const bulkReleaseBody = z
  .object({
    tenant: safeText(255, 1).optional(),
    q: safeText(255).optional(),
    jobType: safeText(255, 1).optional(),
    dryRun: z.boolean().default(false),
  })
  .strict();
