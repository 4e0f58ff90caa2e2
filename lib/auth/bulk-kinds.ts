import { loadConfig } from "../config";
import type { Prisma } from "../db/generated/client";
import { schemaNameOf } from "../idempotency/admin";
import type { Principal } from "./auth-types";
import type { BulkActionKind, BulkReleaseFilter, StuckClaimSample } from "./bulk-types";
import { releaseInTransaction } from "./release-effect";

/**
 * What each kind of bulk action matches and what it does to one item. A new kind (acknowledging
 * reconciliation findings) adds an entry here and its value to bulk_actions_kind_check: the
 * actions table, the cap, the runner, cancel and resume stay as they are.
 */
export interface BulkKind<F> {
  /** Inserts the matched items (seq from 1, in the order they will run), at most `limit`; returns how many. */
  snapshot(tx: Prisma.TransactionClient, input: { actionId: string; tenant: string; filter: F; limit: number }): Promise<number>;
  /** Applies the action to one item inside the runner's transaction; "ok" or the refusal's reason. */
  apply(
    tx: Prisma.TransactionClient,
    input: { principal: Principal; tenant: string; key: string; ip: string | null; actionId: string },
  ): Promise<string>;
}

// A claim a bulk release may release: in progress, its lease expired, not at-most-once (which the
// library never releases: its next delivery marks it abandoned). The Keys page's key fragment
// (strpos: "%" and "_" are literal) and job type narrow it. Oldest lease first.
const stuckWhere = (effects: string) => `
  FROM ${effects}
 WHERE tenant_id = $1 AND status = 'in_progress' AND lease_until < now() AND policy <> 'at_most_once'
   AND ($2::text IS NULL OR strpos(lower(key), lower($2)) > 0)
   AND ($3::text IS NULL OR job_type = $3)`;

/** A table of the library's schema, qualified: raw SQL through Prisma has no search_path to lean on. */
export function consoleTable(name: "effects" | "bulk_actions" | "bulk_action_items"): string {
  return `${schemaNameOf(loadConfig().ONCEBOARD_SCHEMA)}.${name}`;
}

const effectsTable = () => consoleTable("effects");

/** How many stuck claims match (up to `limit`), and the first few. */
export async function matchStuckClaims(
  db: Pick<Prisma.TransactionClient, "$queryRawUnsafe">,
  input: { tenant: string; filter: BulkReleaseFilter; limit: number; sample: number },
): Promise<{ count: number; sample: StuckClaimSample[] }> {
  const where = stuckWhere(effectsTable());
  const args = [input.tenant, input.filter.q, input.filter.jobType];
  const [counted, sample] = await Promise.all([
    db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM (SELECT 1 ${where} LIMIT ${Math.trunc(input.limit)}) m`,
      ...args,
    ),
    db.$queryRawUnsafe<{ key: string; job_type: string; attempt: number; owner: string | null; lease_until: Date }[]>(
      `SELECT key, job_type, attempt, owner, lease_until ${where} ORDER BY lease_until, key LIMIT ${Math.trunc(input.sample)}`,
      ...args,
    ),
  ]);
  return {
    count: counted[0]?.n ?? 0,
    sample: sample.map((r) => ({
      key: r.key,
      jobType: r.job_type,
      attempt: Number(r.attempt),
      owner: r.owner,
      leaseUntil: new Date(r.lease_until).toISOString(),
    })),
  };
}

const releaseStuckClaims: BulkKind<BulkReleaseFilter> = {
  async snapshot(tx, { actionId, tenant, filter, limit }) {
    return tx.$executeRawUnsafe(
      `INSERT INTO ${consoleTable("bulk_action_items")} (action_id, seq, key)
       SELECT $4::uuid, row_number() OVER (ORDER BY lease_until, key), key
         FROM (SELECT key, lease_until ${stuckWhere(effectsTable())} ORDER BY lease_until, key LIMIT ${Math.trunc(limit)}) m`,
      tenant,
      filter.q,
      filter.jobType,
      actionId,
    );
  },
  async apply(tx, { principal, tenant, key, ip, actionId }) {
    // The library's release with its guards (a live lease, a completed or at-most-once effect is
    // refused), audited as the person who started the action, naming the action.
    const result = await releaseInTransaction(tx, { principal, tenant, key, ip, detail: { bulkAction: actionId } });
    return typeof result === "number" ? "ok" : result.reason;
  },
};

export const BULK_KINDS: Record<BulkActionKind, BulkKind<BulkReleaseFilter>> = {
  release_stuck_claims: releaseStuckClaims,
};
