import { randomUUID } from "node:crypto";
import { appendAudit } from "../../auth/audit";
import type { Principal } from "../../auth/auth-types";
import { loadConfig } from "../../config";
import { type EffectsStore, effectsStore, type MysqlEffectsStore } from "../../console/effects-store";
import { ConsoleError } from "../../console/errors";
import type { Prisma } from "../../db/generated/client";
import type { PrismaClient } from "../../db/prisma";
import { getPrisma } from "../../db/prisma";
import { type ReleaseRefusal, type ReleaseResult, releaseClaim, type UnreleasedEffect } from "../../idempotency/admin";
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

/**
 * POST /api/v1/effects/{key}/release: the library releases the stuck claim (releaseClaim: its lock,
 * its guards) and the release is audited, refusals too (then thrown as ReleaseRefusedError with the
 * reason explained). With the effects in the console's PostgreSQL the release and its audit row
 * commit in one transaction; on a MySQL store, see releaseOnMysql.
 */
export async function releaseEffect(
  input: { principal: Principal; tenant: string; key: string; ip: string | null },
  db: PrismaClient = getPrisma(),
  schema = loadConfig().ONCEBOARD_SCHEMA,
  store: EffectsStore = effectsStore(),
): Promise<ReleaseResponse> {
  const outcome =
    store.engine === "mysql"
      ? await releaseOnMysql(store, input, db)
      : await db.$transaction((tx) => releaseInTransaction(tx, input, schema));
  if (outcome instanceof ReleaseRefusedError) throw outcome;
  return {
    released: true,
    key: input.key,
    status: "failed",
    message: `released: attempt ${outcome}'s claim is marked failed; the next delivery retries it as attempt ${outcome + 1}`,
  };
}

/** The audit row's result for a release whose outcome the console never heard. */
export const RELEASE_OUTCOME_UNKNOWN = "unknown";
/** The audit row's result committed before a release on a MySQL store is tried. */
export const RELEASE_REQUESTED = "requested";

/**
 * A release on a MySQL effects store, audited in the console's PostgreSQL. No transaction spans the
 * two servers (and XA across PostgreSQL and MySQL is not on offer), so the audit trail is written
 * around the release instead of with it, in an order that never misses an action and never claims
 * one that did not happen:
 * 1. the audit row "requested", naming a request id, is committed first — nothing can be released
 *    that the audit log does not name;
 * 2. the library releases under that request id (releaseClaim's requestId: the row's lock and the
 *    same guards, one MySQL transaction, and the request's own row there, so running it again
 *    releases nothing and answers what it did the first time — the bulk runner's resume relies on it);
 * 3. the outcome is audited (ok with the attempt, or the refusal's reason), naming the request.
 * When MySQL fails mid-call the outcome is unknown (the COMMIT may have landed before the
 * connection broke): that is audited as "unknown", never as released, and the answer says so; a
 * process that dies between 1 and 3 leaves the "requested" row alone, which the Audit view shows
 * as outcome unknown. The library's settleRelease() decides such a request later (docs/operations.md).
 */
export async function releaseOnMysql(
  store: MysqlEffectsStore,
  input: {
    principal: Principal;
    tenant: string;
    key: string;
    ip: string | null;
    /** Default: a fresh one. The bulk runner names each item's, so a resumed item repeats harmlessly. */
    requestId?: string;
    detail?: Record<string, string>;
  },
  db: Pick<PrismaClient, "auditLog"> = getPrisma(),
): Promise<number | ReleaseRefusedError> {
  const request = input.requestId ?? randomUUID();
  const audited = (result: string, detail: Record<string, string | number | boolean>) =>
    appendAudit(db, {
      principal: input.principal,
      action: "effect.release",
      tenantId: input.tenant,
      target: input.key,
      result,
      detail: { request, store: "mysql", ...input.detail, ...detail },
      ip: input.ip,
    });
  await audited(RELEASE_REQUESTED, {});
  let result: ReleaseResult;
  try {
    result = await releaseClaim(store.pool, {
      tenant: input.tenant,
      key: input.key,
      releasedBy: input.principal.actor,
      schema: store.database,
      requestId: request,
    });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    // The unknown is recorded as such; if even that fails, the "requested" row alone says it.
    await audited(RELEASE_OUTCOME_UNKNOWN, { error: why.slice(0, 500) }).catch(() => {});
    throw new ConsoleError(
      "DATABASE_UNAVAILABLE",
      `the MySQL effects store failed during the release (${why}): whether the claim was released is unknown. The audit log records request ${request} as outcome unknown; look the key up before releasing it again`,
      { cause: error },
    );
  }
  const refusal = result.released ? null : explain(result.reason, result.effect);
  await audited(refusal ? refusal.reason : "ok", {
    ...(result.released ? { attempt: result.attempt } : {}),
    ...(result.repeated ? { repeated: true } : {}),
  });
  return refusal ?? (result.released ? result.attempt : 0);
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
  if (reason === "fenced") {
    return new ReleaseRefusedError(
      "fenced",
      "refused: this release request was settled as never run before it arrived (settleRelease), so it released nothing",
    );
  }
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
