import { audit } from "../../auth/audit";
import type { Principal } from "../../auth/auth-types";
import type { Scope } from "../../auth/scope";
import type { EffectDetail, EffectSearchResponse } from "./contract";
import { getEffect } from "./get-effect";
import { type EffectSearch, searchEffects } from "./search-effects";

/**
 * The key reads, each with its audit row: what GET /api/v1/effects/{key} and GET /api/v1/effects
 * answer, and what the Keys page renders on the server (a finding's read, which shows a key the
 * same way, is lib/features/reconciliation/audited-reads.ts). One function per read, so the page
 * cannot read a key without the audit row the API writes. The row is committed before the data is
 * returned. Both read one tenant: a tenant scope's own, or the one a platform scope names.
 */

/** One effect's detail, or null when the tenant has none (audited as not_found). */
export async function readEffectAudited(input: {
  principal: Principal;
  scope: Scope;
  /** The tenant asked for (?tenant=): only a platform scope's is read. */
  tenant?: string | null;
  key: string;
  ip: string | null;
}): Promise<EffectDetail | null> {
  const tenant = input.scope.narrow(input.tenant).oneTenant();
  const detail = await getEffect(input.scope, { tenant, key: input.key });
  await audit({
    principal: input.principal,
    action: "effect.read",
    tenantId: tenant,
    target: input.key,
    result: detail ? "ok" : "not_found",
    ip: input.ip,
  });
  return detail;
}

/** One page of a tenant's search, or (a platform scope naming no tenant) of every tenant's. */
export async function searchEffectsAudited(input: {
  principal: Principal;
  scope: Scope;
  search: EffectSearch;
  ip: string | null;
}): Promise<EffectSearchResponse> {
  const { search, scope } = input;
  const tenant = scope.narrow(search.tenant).tenant;
  const result = await searchEffects(scope, { ...search, tenant });
  await audit({
    principal: input.principal,
    action: "effect.search",
    tenantId: tenant,
    target: search.q ?? null,
    result: "ok",
    detail: { results: result.effects.length, status: search.status ?? null, jobType: search.jobType ?? null },
    ip: input.ip,
  });
  return result;
}
