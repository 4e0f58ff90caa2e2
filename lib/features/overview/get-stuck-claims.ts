import type { Scope } from "../../auth/scope";
import { loadConfig } from "../../config";
import { consoleDatabase } from "../../console/database";
import type { Queryable } from "../../db/types";
import { readStuckClaims } from "../../idempotency/admin";
import type { StuckClaim } from "./contract";

interface GetStuckClaimsInput {
  jobType?: string | null;
  limit?: number;
  now?: Date;
}

interface StuckClaims {
  claims: StuckClaim[];
  total: number;
  byTenant: Map<string, number>;
}

/** Which claims are stuck right now (oldest lease first), and how many per tenant: the scope's tenant, or every tenant for the platform. */
export async function getStuckClaims(
  scope: Scope,
  input: GetStuckClaimsInput = {},
  db: Queryable = consoleDatabase(),
): Promise<StuckClaims> {
  const now = input.now ?? new Date();
  const stuck = await readStuckClaims(db, {
    now,
    jobType: input.jobType ?? null,
    tenant: scope.tenant,
    limit: input.limit ?? 50,
    schema: loadConfig().ONCEBOARD_SCHEMA,
  });
  return {
    total: [...stuck.byTenant.values()].reduce((a, b) => a + b, 0),
    byTenant: stuck.byTenant,
    claims: stuck.claims.map((r) => ({
      tenant: r.tenant,
      key: r.key,
      jobType: r.jobType,
      attempt: r.attempt,
      owner: r.owner,
      createdAt: r.createdAt.toISOString(),
      leaseUntil: r.leaseUntil.toISOString(),
      ageSeconds: Math.round((now.getTime() - r.createdAt.getTime()) / 1000),
      overdueSeconds: Math.round((now.getTime() - r.leaseUntil.getTime()) / 1000),
    })),
  };
}
