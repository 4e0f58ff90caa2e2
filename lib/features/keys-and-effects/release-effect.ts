import { appendAudit } from "../../auth/audit";
import type { Principal } from "../../auth/auth-types";
import { loadConfig } from "../../config";
import { requireEffectsInConsoleDatabase } from "../../console/effects-store";
import type { Prisma } from "../../db/generated/client";
import type { PrismaClient } from "../../db/prisma";
import { getPrisma } from "../../db/prisma";
import { type ReleaseRefusal, releaseClaim, type UnreleasedEffect } from "../../idempotency/admin";
import type { ReleaseResponse } from "./contract";

export class ReleaseRefusedError extends Error {
  readonly code: "NOT_FOUND" | "CONFLICT";
  constructor(
    readonly reason: ReleaseRefusal,
    message: string,
  ) {
    super(message);
    this.name = "ReleaseRefusedError";
    this.code = reason === "not_found" ? "NOT_FOUND" : "CONFLICT";
  }
}

export type { ReleaseRefusal } from "../../idempotency/admin";

/** Why a release (one, or in bulk) is refused on a MySQL effects store. */
export const RELEASE_ON_MYSQL_REFUSED =
  "the claim is in the MySQL store and the audit log in PostgreSQL, and no transaction spans both, so a release could commit without its audit row; release it with the library's releaseClaim() from a script of yours";

/**
 * POST /api/v1/effects/{key}/release: the library releases the stuck claim (releaseClaim: its lock,
 * its guards) in the transaction that appends the audit row (a release without its audit row
 * cannot commit).
 * Refusals are audited too, then thrown as ReleaseRefusedError with the reason explained.
 */
export async function releaseEffect(
  input: { principal: Principal; tenant: string; key: string; ip: string | null },
  db: PrismaClient = getPrisma(),
  schema = loadConfig().ONCEBOARD_SCHEMA,
): Promise<ReleaseResponse> {
  requireEffectsInConsoleDatabase("Releasing a stuck claim", RELEASE_ON_MYSQL_REFUSED);
  const outcome = await db.$transaction((tx) => releaseInTransaction(tx, input, schema));
  if (outcome instanceof ReleaseRefusedError) throw outcome;
  return {
    released: true,
    key: input.key,
    status: "failed",
    message: `released: attempt ${outcome}'s claim is marked failed; the next delivery retries it as attempt ${outcome + 1}`,
  };
}

/**
 * The guarded release inside the caller's transaction: releaseClaim, then its audit row (ok, or
 * the refusal's reason). The released attempt, or the refusal explained (not thrown: the caller's
 * other writes — a bulk action's progress — commit with the refusal's audit row). `detail` joins
 * the audit row's (a bulk action names itself there).
 */
export async function releaseInTransaction(
  tx: Prisma.TransactionClient,
  input: { principal: Principal; tenant: string; key: string; ip: string | null; detail?: Record<string, string> },
  schema = loadConfig().ONCEBOARD_SCHEMA,
): Promise<number | ReleaseRefusedError> {
  const result = await releaseClaim(tx, {
    tenant: input.tenant,
    key: input.key,
    releasedBy: input.principal.actor,
    schema,
  });
  const refusal = result.released ? null : explain(result.reason, result.effect);
  const detail = { ...(result.released ? { attempt: result.attempt } : {}), ...input.detail };
  await appendAudit(tx, {
    principal: input.principal,
    action: "effect.release",
    tenantId: input.tenant,
    target: input.key,
    result: refusal ? refusal.reason : "ok",
    detail: Object.keys(detail).length > 0 ? detail : null,
    ip: input.ip,
  });
  return refusal ?? (result.released ? result.attempt : 0);
}

function explain(reason: ReleaseRefusal, row: UnreleasedEffect | null): ReleaseRefusedError {
  if (reason === "not_found" || !row) return new ReleaseRefusedError("not_found", "no effect with this key");
  if (reason === "completed") {
    return new ReleaseRefusedError("completed", "refused: the effect is completed; releasing it would let it run again");
  }
  if (reason === "not_in_progress") {
    return new ReleaseRefusedError(
      "not_in_progress",
      `refused: the effect is ${row.status}, not in progress; ${row.status === "failed" ? "the next delivery retries it already" : "an abandoned step is never run again"}`,
    );
  }
  if (reason === "at_most_once") {
    return new ReleaseRefusedError(
      "at_most_once",
      "refused: an at-most-once step is never released. Its worker may have sent before it died, so when its lease expires the next delivery marks it abandoned instead of running it again",
    );
  }
  return new ReleaseRefusedError(
    "lease_alive",
    `refused: the lease of attempt ${row.attempt} (${row.owner ?? "?"}) is alive until ${row.leaseUntil?.toISOString() ?? "?"}; a worker may still be running it`,
  );
}
