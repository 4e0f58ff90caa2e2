import { type EffectsDb, type Statement, sqlFor } from "./db";
import type { Logger } from "./logger";
import { PeriodicFlush } from "./periodic-flush";
import type { DuplicateCounts, Store } from "./store";

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

export class DuplicateLedger extends PeriodicFlush {
  private pending = new Map<string, DuplicateCounts>();

  constructor(
    private readonly db: EffectsDb,
    private readonly options: {
      schema?: string;
      logger: Logger;
      onFlushFailure?: (error: unknown) => void;
      /** Entries applied to no row (their effect was pruned or deleted before the flush): their counts are gone. */
      onDropped?: (entries: number) => void;
      store: Store;
    },
  ) {
    super();
  }

  record(tenant: string, key: string, createdAt: Date, gapSeconds: number | null, messageId: string | null): void {
    const id = idOf(tenant, key, createdAt.toISOString());
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
    const entries = [...this.pending.values()];
    this.pending = new Map();
    const sql = sqlFor(this.db, false, this.options.schema);
    let ok = true;
    let dropped = 0;
    for (const part of await this.options.store.applyDuplicates(sql, entries)) {
      if (part.ok) {
        // The ledger keys one entry per row, so each entry updates one row, or none when its row is gone.
        dropped += Math.max(0, part.entries.length - part.updated);
        continue;
      }
      ok = false;
      for (const p of part.entries) this.merge(idOf(p.tenant_id, p.key, p.created_at), p);
      this.options.onFlushFailure?.(part.error);
      this.options.logger.warn({ err: part.error }, "duplicate bookkeeping flush failed; kept for the next flush");
    }
    if (dropped > 0) {
      this.options.onDropped?.(dropped);
      this.options.logger.warn(
        { entries: dropped },
        "duplicate bookkeeping found no effect row for some entries (pruned or deleted since their duplicate was seen); their counts are dropped",
      );
    }
    return ok;
  }

  private merge(id: string, p: DuplicateCounts): void {
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

/** One effect row: its tenant, key and created_at (the partition). */
function idOf(tenant: string, key: string, createdAt: string): string {
  return `${tenant}\u0001${key}\u0001${createdAt}`;
}
