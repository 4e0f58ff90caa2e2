import type { EffectDetail, EffectSearchResponse } from "../console/effects-types";
import { getEffect } from "../console/get-effect";
import { getFinding } from "../console/get-finding";
import type { FindingDetail } from "../console/reconciliation-types";
import { type EffectSearch, searchEffects } from "../console/search-effects";
import { audit } from "./audit";
import type { Principal } from "./auth-types";
import type { Scope } from "./scope";

/**
 * The key reads, each with its audit row: what GET /api/v1/effects/{key}, GET /api/v1/effects and
 * GET /api/v1/reconciliation/findings/{id} answer, and what the Keys and Reconciliation pages
 * render on the server. One function per read, so the page cannot
 * read a key without the audit row the API writes. The row is committed before the data is returned.
 * Both read one tenant: a tenant scope's own, or the one a platform scope names.
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

/**
 * One reconciliation finding, or null when the scope has none (audited as not_found). A finding
 * shows an effect's key, provider key and recorded outcome — what opening the key on the Keys page
 * shows — so it is a key read like that one, audited the same way.
 */
export async function readFindingAudited(input: {
  principal: Principal;
  scope: Scope;
  id: string;
  ip: string | null;
}): Promise<FindingDetail | null> {
  const finding = await getFinding(input.scope, input.id);
  await audit({
    principal: input.principal,
    action: "reconciliation.finding.read",
    // The finding's own tenant (a platform reader's row lands where that tenant's admin sees it).
    tenantId: finding ? finding.tenant : input.scope.tenant,
    target: input.id,
    result: finding ? "ok" : "not_found",
    detail: finding ? { effectKey: finding.effectKey, provider: finding.provider } : undefined,
    ip: input.ip,
  });
  return finding;
}
