import { byTenant, ensureStoreMode, newStoreMode } from "../citus";
import { runClaim, runClaimBatch } from "../claim-sql";
import { runAbandon, runComplete, runCompleteBatch, runExtendLease, runFail, runFailBatch } from "../complete-sql";
import type { EffectsDb, Sql } from "../db";
import { APPLY_DUPLICATES, APPLY_TENANT_DUPLICATES } from "../duplicates";
import type { DuplicateCounts, DuplicatesApplied, Store } from "../store";
import * as bookkeeping from "./postgres-bookkeeping";

/** Duplicate entries per onceboard_apply_duplicates call, on one server. */
const DUPLICATES_PER_CALL = 500;

/**
 * PostgreSQL: one server, or a Citus cluster with effects distributed by tenant (its mode, learned
 * by prepare(): citus.ts). The statements are claim-sql.ts's and complete-sql.ts's, whose SQL
 * functions' sources are sql/*.sql; on Citus each goes through its one-tenant path, delegated to the
 * worker that holds the tenant's shard.
 */
export function createPostgresStore(): Store {
  const mode = newStoreMode();
  return {
    engine: "postgres",
    prepare: (db: EffectsDb, schema: string) => ensureStoreMode(mode, db, schema),
    claim: (sql, params) => runClaim(sql, params, mode.citus),
    claimBatch: (sql, params) => runClaimBatch(sql, params, mode.citus),
    complete: (sql, c) => runComplete(sql, c.ref, c.outcomeJson, c.error, mode.citus, c.replacesEmpty === true),
    completeBatch: (sql, completions) => runCompleteBatch(sql, completions, mode.citus),
    fail: (sql, r) => runFail(sql, r.ref, r.message, mode.citus),
    failBatch: (sql, releases) => runFailBatch(sql, releases, mode.citus),
    abandon: (sql, r) => runAbandon(sql, r.ref, r.message, mode.citus),
    extendLease: (sql, ref, leaseMs) => runExtendLease(sql, ref, leaseMs),
    applyDuplicates: (sql, entries) => applyDuplicates(sql, entries, mode.citus),
    ...bookkeeping,
  };
}

/**
 * One server: the entries in chunks, one call after another. Citus: one call per tenant, at once,
 * delegated to its worker (onceboard_apply_duplicates joins many tenants' rows, which Citus cannot
 * plan); each call commits alone, so only a failed call's entries are kept for the next flush.
 */
async function applyDuplicates(sql: Sql, entries: readonly DuplicateCounts[], citus: boolean): Promise<DuplicatesApplied[]> {
  const calls = citus
    ? [...byTenant(entries, (e) => e.tenant_id)].map(([tenant, indexes]) => ({
        tenant: tenant as string | null,
        entries: indexes.map((i) => entries[i] as DuplicateCounts),
      }))
    : chunks(entries, DUPLICATES_PER_CALL).map((part) => ({ tenant: null as string | null, entries: part }));
  const send = async ({ tenant, entries: part }: (typeof calls)[number]): Promise<DuplicatesApplied> => {
    try {
      const { rows } =
        tenant === null
          ? await sql.run<{ updated: number }>(APPLY_DUPLICATES, [json(part)])
          : await sql.run<{ updated: number }>(APPLY_TENANT_DUPLICATES, [tenant, json(part)]);
      return { entries: part, ok: true, updated: Number(rows[0]?.updated ?? 0) };
    } catch (error) {
      return { entries: part, ok: false, error };
    }
  };
  if (citus) return Promise.all(calls.map(send));
  const results: DuplicatesApplied[] = [];
  for (const call of calls) results.push(await send(call));
  return results;
}

function json(entries: readonly DuplicateCounts[]): string {
  return JSON.stringify(entries.map((e) => ({ ...e, last_at: new Date(e.last_at).toISOString() })));
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
