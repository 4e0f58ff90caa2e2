import { ApiError } from "../../api/errors";
import { type DeclaredRoute, refusal, route } from "../../auth/declare-route";
import { readEffectAudited, searchEffectsAudited } from "./audited-reads";
import { listEffectsInStateAudited, listKeyReuseRefusalsAudited } from "./audited-state-reads";
import { effectDetail, effectKeyPath, effectSearchQuery, effectSearchResponse, releaseResponse, tenantQuery } from "./contract";
import { effectKeyFromPath } from "./effect-key";
import { countEffectStates } from "./effect-states";
import { ReleaseRefusedError, releaseEffect } from "./release-effect";
import {
  effectStatePath,
  effectStatesQuery,
  effectStatesResponse,
  keyReuseListResponse,
  stateListQuery,
  stateListResponse,
} from "./states-contract";

export const searchEffectsRoute = route({
  method: "GET",
  path: "/api/v1/effects",
  role: "viewer",
  summary: "Search one tenant's effects by key prefix or fragment, newest first (viewer)",
  query: effectSearchQuery,
  response: effectSearchResponse,
  errors: [400, 401, 403, 429, 503, 504],
  handler: ({ principal, scope, query, ip }) => searchEffectsAudited({ principal, scope, search: query, ip }),
});

/**
 * The tenant comes from the token (a platform token adds ?tenant=). Another tenant's key answers
 * exactly like a missing one: same query, same audit write, same 404 body.
 */
export const getEffectRoute = route({
  method: "GET",
  path: "/api/v1/effects/{key}",
  role: "viewer",
  summary:
    "One effect: status, attempts, outcome, provider key, message ids, the job's steps, violations, its deliveries (viewer; audited)",
  params: effectKeyPath,
  paramsFrom: (request) => ({ key: effectKeyFromPath(request) }),
  query: tenantQuery,
  response: effectDetail,
  errors: [400, 401, 403, 404, 429, 503, 504],
  handler: async ({ principal, scope, params, query, ip }) => {
    const detail = await readEffectAudited({ principal, scope, tenant: query.tenant, key: params.key, ip });
    if (!detail) throw new ApiError("NOT_FOUND", "no effect with this key");
    return detail;
  },
});

export const releaseEffectRoute = route({
  method: "POST",
  path: "/api/v1/effects/{key}/release",
  role: "operator",
  summary:
    "Release a stuck in-progress claim whose lease expired, so the next delivery retries it (operator; audited: with the release in one transaction, or on a MySQL effects store as requested, then its outcome, never released without a requested row before it). 409 for a live lease, a completed effect, an at-most-once step (which becomes abandoned on the next delivery instead).",
  params: effectKeyPath,
  paramsFrom: (request) => ({ key: effectKeyFromPath(request, "release") }),
  query: tenantQuery,
  response: releaseResponse,
  errors: [400, 401, 403, 404, 409, 429, 503, 504],
  handler: ({ principal, scope, params, query, ip }) =>
    releaseEffect({ principal, tenant: scope.narrow(query.tenant).oneTenant(), key: params.key, ip }).catch(
      refusal(ReleaseRefusedError),
    ),
});

export const effectStatesRoute = route({
  method: "GET",
  path: "/api/v1/effect-states",
  role: "viewer",
  summary:
    "Browse by state: how many effects of the filter are in progress, stuck, failed, abandoned and completed (each in exactly one), and how many deliveries were refused for key reuse (viewer; a tenant token counts its own tenant, a platform token every tenant or ?tenant=)",
  query: effectStatesQuery,
  response: effectStatesResponse,
  errors: [400, 401, 429, 503, 504],
  handler: ({ scope, query }) => countEffectStates(scope, query),
});

export const effectsInStateRoute = route({
  method: "GET",
  path: "/api/v1/effect-states/{state}",
  role: "viewer",
  summary:
    "One state's effects of the filter, newest created first, a keyset page: a failed or abandoned one with its error and attempts (viewer; audited as a search; a tenant token lists its own tenant)",
  params: effectStatePath,
  query: stateListQuery,
  response: stateListResponse,
  errors: [400, 401, 429, 503, 504],
  handler: ({ principal, scope, params, query, ip }) =>
    listEffectsInStateAudited({ principal, scope, list: { ...query, state: params.state }, ip }),
});

export const keyReuseRefusalsRoute = route({
  method: "GET",
  path: "/api/v1/key-reuse-refusals",
  role: "viewer",
  summary:
    "The deliveries refused because their key first came with another payload (OnceboardKeyReuse; the adapters dead-letter them), newest first, as the workers' delivery timeline recorded them (viewer; audited as a search; a tenant token lists its own tenant)",
  query: stateListQuery,
  response: keyReuseListResponse,
  errors: [400, 401, 429, 503, 504],
  handler: ({ principal, scope, query, ip }) => listKeyReuseRefusalsAudited({ principal, scope, list: query, ip }),
});

/** The keys-and-effects feature's routes of /api/v1 (lib/routes/openapi.ts gathers them into the document). */
export const keysAndEffectsRoutes: DeclaredRoute[] = [
  searchEffectsRoute,
  getEffectRoute,
  releaseEffectRoute,
  effectStatesRoute,
  effectsInStateRoute,
  keyReuseRefusalsRoute,
];
