import { audit } from "../../auth/audit";
import type { Principal } from "../../auth/auth-types";
import type { Scope } from "../../auth/scope";
import type { FindingDetail } from "./contract";
import { getFinding } from "./get-finding";

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
