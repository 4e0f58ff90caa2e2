import { byTenant, type StoreMode } from "./citus";
import { type EffectsDb, type Statement, sqlFor } from "./db";
import type { Logger } from "./logger";
import { PeriodicFlush } from "./periodic-flush";

interface Pending {
  tenant_id: string;
  key: string;
  created_at: string;
  n: number;
  /** Epoch ms of the latest duplicate; written as an ISO timestamp at flush. */
  last_at: number;
  max_gap: number;
  last_message_id: string | null;
}

// Why batched: a suppressed duplicate's claim is read-only (no WAL flush at commit), which keeps
// duplicates cheap exactly when they spike (a redelivery storm). The per-row bookkeeping the
// console shows (duplicate_count, last_duplicate_at, max_gap_seconds) is applied here, one
// UPDATE for every duplicate seen since the last flush. The counts add, so a retried flush after
// a failure is exact; they lag by at most the flush interval, and a worker killed between flushes
// loses only its unflushed bookkeeping (never a claim).
export const APPLY_DUPLICATES: Statement = {
  name: "onceboard_apply_duplicates_v2",
  returns: "rows",
  // One UPDATE inside the function, its plan pinned (lib/idempotency/sql/onceboard_apply_duplicates.sql says why).
  text: "SELECT onceboard.onceboard_apply_duplicates($1::jsonb) AS updated",
};

// On Citus (sql/onceboard_apply_tenant_duplicates.sql): one tenant's entries per call, delegated to
// the tenant's worker; onceboard_apply_duplicates joins many tenants' rows, which Citus cannot plan.
export const APPLY_TENANT_DUPLICATES: Statement = {
  name: "onceboard_apply_tenant_duplicates_v1",
  returns: "rows",
  text: "SELECT onceboard.onceboard_apply_tenant_duplicates($1::text, $2::jsonb) AS updated",
};

const BATCH = 500;

export class DuplicateLedger extends PeriodicFlush {
  private pending = new Map<string, Pending>();

  constructor(
    private readonly db: EffectsDb,
    private readonly options: {
      schema?: string;
      logger: Logger;
      onFlushFailure?: (error: unknown) => void;
      /** Set before the first claim (citus.ts); absent: one server. */
      store?: StoreMode;
    },
  ) {
    super();
  }

  record(tenant: string, key: string, createdAt: Date, gapSeconds: number | null, messageId: string | null): void {
    const created = createdAt.getTime();
    const id = `${tenant}\u0001${key}\u0001${created}`;
    const now = Date.now();
    const entry = this.pending.get(id);
    if (entry) {
      entry.n += 1;
      entry.last_at = now;
      entry.max_gap = Math.max(entry.max_gap, gapSeconds ?? 0);
      entry.last_message_id = messageId ?? entry.last_message_id;
    } else {
      this.pending.set(id, {
        tenant_id: tenant,
        key,
        created_at: createdAt.toISOString(),
        n: 1,
        last_at: now,
        max_gap: gapSeconds ?? 0,
        last_message_id: messageId,
      });
    }
  }

  get size(): number {
    return this.pending.size;
  }

  protected async flushOnce(): Promise<boolean> {
    if (this.pending.size === 0) return true;
    const entries = [...this.pending.entries()];
    this.pending = new Map();
    const sql = sqlFor(this.db, false, this.options.schema);
    // On Citus, one call per tenant: each call commits alone, so only a failed call's entries are
    // kept for the next flush (the counts add: sending a committed one again would count it twice).
    const calls = this.options.store?.citus
      ? [...byTenant(entries, ([, p]) => p.tenant_id)].map(([tenant, indexes]) => ({
          tenant,
          batch: indexes.map((i) => entries[i] as [string, Pending]),
        }))
      : chunks(entries, BATCH).map((batch) => ({ tenant: null, batch }));
    const send = ({ tenant, batch }: (typeof calls)[number]) =>
      tenant === null ? sql.run(APPLY_DUPLICATES, [json(batch)]) : sql.run(APPLY_TENANT_DUPLICATES, [tenant, json(batch)]);
    // One server: the chunks one after another, as ever; Citus: the tenants' calls at once.
    const results: PromiseSettledResult<unknown>[] = [];
    if (this.options.store?.citus) results.push(...(await Promise.allSettled(calls.map(send))));
    else for (const call of calls) results.push((await Promise.allSettled([send(call)]))[0] as PromiseSettledResult<unknown>);
    let ok = true;
    for (const [k, result] of results.entries()) {
      if (result.status === "fulfilled") continue;
      ok = false;
      for (const [id, p] of (calls[k] as (typeof calls)[number]).batch) this.merge(id, p);
      this.options.onFlushFailure?.(result.reason);
      this.options.logger.warn({ err: result.reason }, "duplicate bookkeeping flush failed; kept for the next flush");
    }
    return ok;
  }

  private merge(id: string, p: Pending): void {
    const existing = this.pending.get(id);
    if (!existing) {
      this.pending.set(id, p);
      return;
    }
    existing.n += p.n;
    existing.max_gap = Math.max(existing.max_gap, p.max_gap);
    if (p.last_at > existing.last_at) existing.last_at = p.last_at;
  }
}

function json(batch: readonly [string, Pending][]): string {
  return JSON.stringify(batch.map(([, p]) => ({ ...p, last_at: new Date(p.last_at).toISOString() })));
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
