import { z } from "zod";
import { ROLES } from "../../auth/auth-types";
import { cursorParam, instant, nextCursor, nullableInstant } from "../../console/common-contract";
import { isoInstant, safeText } from "../../fields";

/** The contract of /api/v1/tokens and /api/v1/sessions: their paths, queries, bodies and answers. */

/** The id in /api/v1/tokens/{id}/revoke and /api/v1/sessions/{id}/revoke: a UUID (a token's id, a session's public id). */
export const adminId = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be a UUID")
  .transform((value) => value.toLowerCase());

export const adminIdPath = z.object({ id: adminId });

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
    expiresAt: isoInstant.nullable().optional().meta({
      description:
        "null: never. Minted by a token (or its session): at most that token's expiry, which is also the default; revoking that token revokes this one",
    }),
  })
  .strict();

/** The most tokens or sessions one page holds (and the admin page shows). */
const ADMIN_PAGE_MAX = 1000;

/** GET /api/v1/tokens and /api/v1/sessions query: a platform admin may narrow to one tenant; newest first, a page at a time. */
export const adminListQuery = z.object({
  tenant: safeText(255, 1).optional(),
  cursor: cursorParam,
  limit: z.coerce.number().int().min(1).max(ADMIN_PAGE_MAX).default(ADMIN_PAGE_MAX),
});

/** A machine token as the admin page and GET /api/v1/tokens show it: never its secret or hash. */
const tokenViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** null: a platform token. */
  tenantId: z.string().nullable(),
  role: z.enum(ROLES),
  /** The secret's last 6 characters, how people tell tokens apart. */
  suffix: z.string(),
  createdAt: instant,
  expiresAt: nullableInstant,
  revokedAt: nullableInstant,
  lastUsedAt: nullableInstant,
  state: z.enum(["active", "revoked", "expired"]),
});
export type TokenView = z.infer<typeof tokenViewSchema>;

export const tokensResponse = z.object({ tokens: z.array(tokenViewSchema), nextCursor });
export type TokensResponse = z.infer<typeof tokensResponse>;

/** POST /api/v1/tokens: the new token and its secret, which is shown this once and never again. */
export const createdTokenResponse = z.object({ token: tokenViewSchema, secret: z.string() });
export type CreatedTokenResponse = z.infer<typeof createdTokenResponse>;

/** POST /api/v1/sessions/{id}/revoke. */
export const revokedSessionResponse = z.object({ id: z.string(), revoked: z.literal(true) });

/** A live console session. `id` is its public id: it grants nothing (the cookie's secret never leaves the browser). */
const sessionView = z.object({
  id: z.string(),
  /** The token it was signed in with, or the person (OIDC), as the audit log names them. */
  actor: z.string(),
  /** null: an OIDC session (no token). */
  tokenId: z.string().nullable(),
  tenantId: z.string().nullable(),
  role: z.enum(ROLES),
  /** How it was signed in: token, link (one-time login link), oidc, or what else console_sessions holds. */
  signedInWith: z.string(),
  clientIp: z.string().nullable(),
  createdAt: instant,
  lastSeenAt: instant,
  expiresAt: instant,
});
export type SessionView = z.infer<typeof sessionView>;

export const sessionsResponse = z.object({ sessions: z.array(sessionView), nextCursor });
export type SessionsResponse = z.infer<typeof sessionsResponse>;

/** POST /api/v1/tokens/{id}/revoke: the token as it now is (revoked). */
export const revokedTokenResponse = z.object({ token: tokenViewSchema });
