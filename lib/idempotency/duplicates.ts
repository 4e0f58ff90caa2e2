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

const BATCH = 500;

export class DuplicateLedger extends PeriodicFlush {
  private pending = new Map<string, Pending>();

  constructor(
    private readonly db: EffectsDb,
    private readonly options: { schema?: string; logger: Logger; onFlushFailure?: (error: unknown) => void },
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
    let ok = true;
    for (let i = 0; i < entries.length; i += BATCH) {
      const batch = entries.slice(i, i + BATCH);
      try {
        await sql.run(APPLY_DUPLICATES, [
          JSON.stringify(batch.map(([, p]) => ({ ...p, last_at: new Date(p.last_at).toISOString() }))),
        ]);
      } catch (error) {
        ok = false;
        for (const [id, p] of batch) this.merge(id, p);
        this.options.onFlushFailure?.(error);
        this.options.logger.warn({ err: error }, "duplicate bookkeeping flush failed; kept for the next flush");
      }
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
