import { type DeclaredRoute, route } from "../../auth/declare-route";
import {
  adminIdPath,
  adminListQuery,
  createdTokenResponse,
  createTokenBody,
  revokedSessionResponse,
  revokedTokenResponse,
  sessionsResponse,
  tokensResponse,
} from "./contract";
import { listLiveSessions, revokeScopedSession } from "./session-admin";
import { createScopedToken, listScopedTokens, revokeScopedToken } from "./token-admin";

export const listTokensRoute = route({
  method: "GET",
  path: "/api/v1/tokens",
  role: "admin",
  summary: "Machine tokens, newest first, revoked and expired ones too; never a secret (admin; a tenant admin sees its tenant's)",
  query: adminListQuery,
  response: tokensResponse,
  errors: [400, 401, 403, 429, 503, 504],
  handler: ({ scope, query: { tenant, cursor, limit } }) => listScopedTokens(scope.narrow(tenant), { cursor, limit }),
});

export const createTokenRoute = route({
  method: "POST",
  path: "/api/v1/tokens",
  role: "admin",
  summary:
    "Create a token; its secret is in this answer only (admin; audited). A tenant admin's token is bound to its tenant; a platform admin's to `tenant`, or to the platform when omitted or null",
  body: createTokenBody,
  response: createdTokenResponse,
  status: 201,
  errors: [400, 401, 403, 413, 429, 503, 504],
  handler: ({ scope, principal, ip, body }) =>
    createScopedToken({
      scope,
      principal,
      ip,
      request: { name: body.name, role: body.role, tenantId: body.tenant, expiresAt: body.expiresAt },
    }),
});

export const revokeTokenRoute = route({
  method: "POST",
  path: "/api/v1/tokens/{id}/revoke",
  role: "admin",
  summary: "Revoke a token (idempotent); its console sessions end with it (admin; audited)",
  params: adminIdPath,
  response: revokedTokenResponse,
  errors: [400, 401, 403, 404, 429, 503, 504],
  handler: async ({ scope, principal, ip, params }) => ({
    token: await revokeScopedToken({ scope, principal, ip, id: params.id }),
  }),
});

export const listSessionsRoute = route({
  method: "GET",
  path: "/api/v1/sessions",
  role: "admin",
  summary:
    "Live console sessions (token and OIDC): who, how signed in, from where, last seen; named by a public id that grants nothing (admin; a tenant admin sees its tenant's)",
  query: adminListQuery,
  response: sessionsResponse,
  errors: [400, 401, 403, 429, 503, 504],
  handler: ({ scope, query: { tenant, cursor, limit } }) => listLiveSessions(scope.narrow(tenant), { cursor, limit }),
});

export const revokeSessionRoute = route({
  method: "POST",
  path: "/api/v1/sessions/{id}/revoke",
  role: "admin",
  summary: "End a live session by its public id: its next request is refused (admin; audited)",
  params: adminIdPath,
  response: revokedSessionResponse,
  errors: [400, 401, 403, 404, 429, 503, 504],
  handler: ({ scope, principal, ip, params }) => revokeScopedSession({ scope, principal, ip, id: params.id }),
});

/** The tokens-and-sessions feature's routes of /api/v1 (lib/routes/openapi.ts gathers them into the document). */
export const tokensAndSessionsRoutes: DeclaredRoute[] = [
  listTokensRoute,
  createTokenRoute,
  revokeTokenRoute,
  listSessionsRoute,
  revokeSessionRoute,
];
