import type { ReleaseResponse } from "../console/effects-types";
import type { PrismaClient } from "../db/prisma";
import { getPrisma } from "../db/prisma";
import { appendAudit } from "./audit";
import type { Principal } from "./auth-types";

export type ReleaseRefusal = "not_found" | "lease_alive" | "completed" | "at_most_once" | "not_in_progress";

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

// Serialised with claimers of the same (tenant, key): onceboard_claim takes this advisory lock
// before it looks, so a takeover and a release never interleave.
const LOCK_SQL = `SELECT pg_advisory_xact_lock(hashtextextended($1::text || chr(1) || $2::text, 0))`;

// The release itself: only an in-progress claim whose lease has expired, and never an
// at-most-once step. Marked failed, so the next delivery takes it over at once (attempt + 1),
// exactly as after a failed attempt.
const RELEASE_SQL = `
UPDATE effects
   SET status = 'failed', lease_until = NULL, updated_at = clock_timestamp(),
       error = 'released by ' || $3::text || ' after the lease of attempt ' || attempt || ' (' || coalesce(owner, '?') || ') expired'
 WHERE tenant_id = $1 AND key = $2 AND created_at <= now() + interval '1 minute'
   AND status = 'in_progress' AND lease_until <= clock_timestamp() AND policy <> 'at_most_once'
RETURNING attempt`;

const LOOK_SQL = `
SELECT status, policy, lease_until, owner, attempt FROM effects
 WHERE tenant_id = $1 AND key = $2 AND created_at <= now() + interval '1 minute' LIMIT 1`;

/**
 * POST /api/v1/effects/{key}/release: releases a stuck claim so a retry may take it over, and
 * appends the audit row in the same transaction (a release without its audit row cannot commit).
 * Refusals are audited too, then thrown as ReleaseRefusedError with the reason explained.
 */
export async function releaseEffect(
  input: { principal: Principal; tenant: string; key: string; ip: string | null },
  db: PrismaClient = getPrisma(),
): Promise<ReleaseResponse> {
  const outcome = await db.$transaction(async (tx) => {
    await tx.$executeRawUnsafe(LOCK_SQL, input.tenant, input.key);
    const released = await tx.$queryRawUnsafe<{ attempt: number }[]>(RELEASE_SQL, input.tenant, input.key, input.principal.actor);
    let refusal: ReleaseRefusedError | null = null;
    if (released.length === 0) {
      const rows = await tx.$queryRawUnsafe<
        { status: string; policy: string; lease_until: Date | null; owner: string | null; attempt: number }[]
      >(LOOK_SQL, input.tenant, input.key);
      refusal = explain(rows[0]);
    }
    await appendAudit(tx, {
      principal: input.principal,
      action: "effect.release",
      tenantId: input.tenant,
      target: input.key,
      result: refusal ? refusal.reason : "ok",
      detail: released[0] ? { attempt: Number(released[0].attempt) } : null,
      ip: input.ip,
    });
    return refusal ?? Number(released[0]?.attempt);
  });
  if (outcome instanceof ReleaseRefusedError) throw outcome;
  return {
    released: true,
    key: input.key,
    status: "failed",
    message: `released: attempt ${outcome}'s claim is marked failed; the next delivery retries it as attempt ${outcome + 1}`,
  };
}

function explain(
  row: { status: string; policy: string; lease_until: Date | null; owner: string | null; attempt: number } | undefined,
): ReleaseRefusedError {
  if (!row) return new ReleaseRefusedError("not_found", "no effect with this key");
  if (row.status === "completed") {
    return new ReleaseRefusedError("completed", "refused: the effect is completed; releasing it would let it run again");
  }
  if (row.status !== "in_progress") {
    return new ReleaseRefusedError(
      "not_in_progress",
      `refused: the effect is ${row.status}, not in progress; ${row.status === "failed" ? "the next delivery retries it already" : "an abandoned step is never run again"}`,
    );
  }
  if (row.policy === "at_most_once") {
    return new ReleaseRefusedError(
      "at_most_once",
      "refused: an at-most-once step is never released. Its worker may have sent before it died, so when its lease expires the next delivery marks it abandoned instead of running it again",
    );
  }
  return new ReleaseRefusedError(
    "lease_alive",
    `refused: the lease of attempt ${row.attempt} (${row.owner ?? "?"}) is alive until ${row.lease_until?.toISOString() ?? "?"}; a worker may still be running it`,
  );
}
