import { audit } from "../../auth/audit";
import type { Principal } from "../../auth/auth-types";
import type { Scope } from "../../auth/scope";
import { countEffectStates, listEffectsInState } from "./effect-states";
import { listKeyReuseRefusals } from "./key-reuse-refusals";
import type { StateFilter } from "./state-filter";
import type { EffectStatesResponse, KeyReuseListResponse, StateListResponse } from "./states-contract";
import { type BrowseList, type EffectState, KEY_REUSE } from "./states-types";

/**
 * The lists of browse by state, each with its audit row, as the Keys search has one: they show
 * keys (and a failed step's error), so who read them is recorded, by the API and the States page
 * alike. Audited as the search is (effect.search), the list named in the row's detail. The counts
 * name no key and are not audited.
 */

interface AuditedListInput<I> {
  principal: Principal;
  scope: Scope;
  list: I;
  ip: string | null;
}

type Page = { cursor?: string; limit: number };

export async function listEffectsInStateAudited(
  input: AuditedListInput<StateFilter & Page & { state: EffectState }>,
): Promise<StateListResponse> {
  const result = await listEffectsInState(input.scope, input.list);
  await auditList(input, input.list.state, result.tenant, result.effects.length);
  return result;
}

export async function listKeyReuseRefusalsAudited(input: AuditedListInput<StateFilter & Page>): Promise<KeyReuseListResponse> {
  const result = await listKeyReuseRefusals(input.scope, input.list);
  await auditList(input, "key_reuse", result.tenant, result.refusals.length);
  return result;
}

function auditList(
  input: AuditedListInput<StateFilter>,
  list: EffectState | "key_reuse",
  tenant: string | null,
  results: number,
): Promise<void> {
  return audit({
    principal: input.principal,
    action: "effect.search",
    tenantId: tenant,
    target: null,
    result: "ok",
    detail: { state: list, results, jobType: input.list.jobType ?? null },
    ip: input.ip,
  });
}

/** What the States page shows: every state's count, and the list of the one it names. */
export interface StatesPageData {
  counts: EffectStatesResponse;
  rows: { kind: "effects"; effects: StateListResponse } | { kind: typeof KEY_REUSE; refusals: KeyReuseListResponse };
}

/**
 * The States page's reads: the counts and the list, with one filter at one instant (`now`), so
 * the count heading the list is the number of rows its pages hold. The list is audited.
 */
export async function readStatesPage(input: {
  principal: Principal;
  scope: Scope;
  ip: string | null;
  state: BrowseList;
  list: StateFilter & Page;
  now?: Date;
}): Promise<StatesPageData> {
  const { principal, scope, ip, state } = input;
  const list = { ...input.list, now: input.now ?? new Date() };
  const [counts, rows] = await Promise.all([
    countEffectStates(scope, list),
    state === KEY_REUSE
      ? listKeyReuseRefusalsAudited({ principal, scope, list, ip }).then((refusals) => ({ kind: KEY_REUSE, refusals }) as const)
      : listEffectsInStateAudited({ principal, scope, list: { ...list, state }, ip }).then(
          (effects) => ({ kind: "effects", effects }) as const,
        ),
  ]);
  return { counts, rows };
}
