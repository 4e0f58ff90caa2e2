import { audit } from "../../auth/audit";
import type { Principal } from "../../auth/auth-types";
import type { Scope } from "../../auth/scope";
import { effectsStore } from "../../console/effects-store";
import type { EffectDetail, EffectSearchResponse } from "./contract";
import { readEffect } from "./get-effect";
import { type EffectSearch, readSearch } from "./search-effects";

/**
 * The key reads, each with its audit row: what GET /api/v1/effects/{key} and GET /api/v1/effects
 * answer, and what the Keys page renders on the server (a finding's read, which shows a key the
 * same way, is lib/features/reconciliation/audited-reads.ts). One function per read, so the page
 * cannot read a key without the audit row the API writes. The row is committed before the data is
 * returned. Both read one tenant: a tenant scope's own, or the one a platform scope names.
 */

/**
 * One effect's detail, or null when the tenant has none (audited as not_found). On PostgreSQL a
 * found effect's row is written by the read's own last statement (readEffect), so it commits only
 * with a read that succeeded and costs no round trip of its own; every other row right after the read.
 */
export async function readEffectAudited(input: {
  principal: Principal;
  scope: Scope;
  /** The tenant asked for (?tenant=): only a platform scope's is read. */
  tenant?: string | null;
  key: string;
  ip: string | null;
}): Promise<EffectDetail | null> {
  const tenant = input.scope.narrow(input.tenant).oneTenant();
  const entry = (result: "ok" | "not_found") => ({
    principal: input.principal,
    action: "effect.read",
    tenantId: tenant,
    target: input.key,
    result,
    ip: input.ip,
  });
  const { detail, audited } = await readEffect(input.scope, { tenant, key: input.key }, effectsStore(), entry("ok"));
  if (!audited) await audit(entry(detail ? "ok" : "not_found"));
  return detail;
}

/**
 * One page of a tenant's search, or (a platform scope naming no tenant) of every tenant's. On
 * PostgreSQL its row is written by the search's own statement (readSearch), as a lookup's is.
 */
export async function searchEffectsAudited(input: {
  principal: Principal;
  scope: Scope;
  search: EffectSearch;
  ip: string | null;
}): Promise<EffectSearchResponse> {
  const { search, scope } = input;
  const tenant = scope.narrow(search.tenant).tenant;
  const entry = (results?: number) => ({
    principal: input.principal,
    action: "effect.search",
    tenantId: tenant,
    target: search.q ?? null,
    result: "ok",
    // Without `results` when the search's statement writes the row: it adds the page's count itself.
    detail: { ...(results === undefined ? {} : { results }), status: search.status ?? null, jobType: search.jobType ?? null },
    ip: input.ip,
  });
  const { response, audited } = await readSearch(scope, { ...search, tenant }, effectsStore(), entry());
  if (!audited) await audit(entry(response.effects.length));
  return response;
}
