import { appendAudit } from "../../auth/audit";
import type { Principal } from "../../auth/auth-types";
import type { Scope } from "../../auth/scope";
import type { Prisma } from "../../db/generated/client";
import type { PrismaClient } from "../../db/prisma";
import { getPrisma } from "../../db/prisma";
import type { FindingStateResponse } from "./contract";
import { FINDING_COLUMNS, type FindingDetailRow, toFindingDetail } from "./get-finding";
import { FINDING_ACTIONS, type FindingAction } from "./reconciliation-types";

/** The states each action may leave: a resolved finding is closed; acknowledging twice says nothing new. */
const FROM_STATES: Record<FindingAction, readonly string[]> = {
  acknowledge: ["open"],
  resolve: ["open", "acknowledged"],
};

export class FindingStateRefusedError extends Error {
  constructor(
    readonly code: "NOT_FOUND" | "CONFLICT",
    message: string,
  ) {
    super(message);
    this.name = "FindingStateRefusedError";
  }
}

// The finding is the scope's when its tenant is the scope's; a finding with no tenant is the platform's.
const UPDATE = `
UPDATE reconciliation_findings
   SET state = $4, state_note = $5, state_changed_by = $6, state_changed_at = now()
 WHERE id = $1::bigint
   AND (CASE WHEN $2::text IS NULL THEN $3::boolean ELSE tenant_id = $2 END)
   AND state = ANY($7::text[])
RETURNING ${FINDING_COLUMNS}`;

const CURRENT = `
SELECT state, tenant_id FROM reconciliation_findings
 WHERE id = $1::bigint AND (CASE WHEN $2::text IS NULL THEN $3::boolean ELSE tenant_id = $2 END)`;

/**
 * POST /api/v1/reconciliation/findings/{id}/acknowledge and …/resolve: the state change and its
 * audit row commit together (a change without its audit row cannot commit). A refusal (another
 * tenant's or a missing finding, one already in that state or resolved) is audited too, then thrown.
 */
export async function changeFindingState(
  input: { principal: Principal; scope: Scope; id: string; action: FindingAction; note: string; ip: string | null },
  db: PrismaClient = getPrisma(),
): Promise<FindingStateResponse> {
  const outcome = await db.$transaction((tx) => changeFindingStateInTransaction(tx, input));
  if (outcome instanceof FindingStateRefusedError) throw outcome;
  return { finding: toFindingDetail(outcome), message: `finding ${input.id} is ${FINDING_ACTIONS[input.action]}` };
}

/**
 * The guarded state change inside the caller's transaction, with its audit row (ok, or the
 * refusal's result): the changed finding, or the refusal explained (not thrown: the caller's other
 * writes — a bulk action's progress — commit with the refusal's audit row). `detail` joins the
 * audit row's (a bulk action names itself there).
 */
export async function changeFindingStateInTransaction(
  tx: Prisma.TransactionClient,
  input: {
    principal: Principal;
    scope: Pick<Scope, "tenant" | "platform">;
    id: string;
    action: FindingAction;
    note: string;
    ip: string | null;
    detail?: Record<string, string>;
  },
): Promise<FindingDetailRow | FindingStateRefusedError> {
  const to = FINDING_ACTIONS[input.action];
  const scopeArgs = [input.id, input.scope.tenant, input.scope.platform] as const;
  const updated = await tx.$queryRawUnsafe<FindingDetailRow[]>(
    UPDATE,
    ...scopeArgs,
    to,
    input.note,
    input.principal.actor,
    FROM_STATES[input.action],
  );
  const row = updated[0];
  let refusal: FindingStateRefusedError | null = null;
  let tenantId: string | null = row ? row.tenant_id : input.principal.tenantId;
  if (!row) {
    const [current] = await tx.$queryRawUnsafe<{ state: string; tenant_id: string | null }[]>(CURRENT, ...scopeArgs);
    if (!current) refusal = new FindingStateRefusedError("NOT_FOUND", "no finding with this id");
    else {
      tenantId = current.tenant_id;
      refusal = new FindingStateRefusedError(
        "CONFLICT",
        current.state === to ? `the finding is ${to} already` : `refused: the finding is ${current.state}; it cannot be ${to}`,
      );
    }
  }
  await appendAudit(tx, {
    principal: input.principal,
    action: `reconciliation.finding.${input.action}`,
    tenantId,
    target: input.id,
    result: refusal ? (refusal.code === "NOT_FOUND" ? "not_found" : "conflict") : "ok",
    detail: { note: input.note, ...input.detail },
    ip: input.ip,
  });
  return refusal ?? (row as FindingDetailRow);
}
