import type { ApiOperations } from "../../api/openapi";
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

/** The tokens-and-sessions feature's operations of /api/v1, by path template and method (lib/routes/openapi.ts gathers them). */
export const tokensAndSessionsOperations: ApiOperations = {
  "/api/v1/tokens": {
    get: {
      summary:
        "Machine tokens, newest first, revoked and expired ones too; never a secret (admin; a tenant admin sees its tenant's)",
      query: adminListQuery,
      response: tokensResponse,
      errors: [400, 401, 403, 429, 503, 504],
    },
    post: {
      summary:
        "Create a token; its secret is in this answer only (admin; audited). A tenant admin's token is bound to its tenant; a platform admin's to `tenant`, or to the platform when omitted or null",
      body: createTokenBody,
      response: createdTokenResponse,
      status: 201,
      errors: [400, 401, 403, 413, 429, 503, 504],
    },
  },
  "/api/v1/tokens/{id}/revoke": {
    post: {
      summary: "Revoke a token (idempotent); its console sessions end with it (admin; audited)",
      path: adminIdPath,
      response: revokedTokenResponse,
      errors: [400, 401, 403, 404, 429, 503, 504],
    },
  },
  "/api/v1/sessions": {
    get: {
      summary:
        "Live console sessions (token and OIDC): who, how signed in, from where, last seen; named by a public id that grants nothing (admin; a tenant admin sees its tenant's)",
      query: adminListQuery,
      response: sessionsResponse,
      errors: [400, 401, 403, 429, 503, 504],
    },
  },
  "/api/v1/sessions/{id}/revoke": {
    post: {
      summary: "End a live session by its public id: its next request is refused (admin; audited)",
      path: adminIdPath,
      response: revokedSessionResponse,
      errors: [400, 401, 403, 404, 429, 503, 504],
    },
  },
};
