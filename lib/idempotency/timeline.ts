import { randomUUID } from "node:crypto";
import type { ClaimResultKind, ClaimRow } from "./claim-sql";
import { type EffectsDb, type Statement, sqlFor } from "./db";
import type { Logger } from "./logger";
import { PeriodicFlush } from "./periodic-flush";
import { sqlStateOf } from "./pg-errors";

/**
 * What one delivery's claim answered, as the key's timeline shows it. The claim's own result,
 * except: a duplicate that first found the effect in flight and waited for its outcome is
 * `waited`, and a delivery refused as older than the retention is `beyond_retention`.
 */
export type TimelineAnswer =
  | "claimed"
  | "duplicate"
  | "waited"
  | "in_flight"
  | "takeover"
  | "retry"
  | "abandoned"
  | "key_reuse"
  | "beyond_retention";

export const TIMELINE_ANSWERS: readonly TimelineAnswer[] = [
  "claimed",
  "duplicate",
  "waited",
  "in_flight",
  "takeover",
  "retry",
  "abandoned",
  "key_reuse",
  "beyond_retention",
];

export function timelineAnswerOf(result: ClaimResultKind, waited: boolean): TimelineAnswer {
  if (result === "retention_expired") return "beyond_retention";
  if (result === "duplicate" && waited) return "waited";
  return result;
}

/** One delivery, as the claim saw it. */
export interface DeliveryRecord {
  tenant: string;
  key: string;
  jobType: string;
  messageId: string | null;
  deliveryAttempt: number | null;
  answer: TimelineAnswer;
  row: ClaimRow;
  claimSeconds: number;
}

interface Pending {
  tenant_id: string;
  key: string;
  delivered_at: string;
  delivery_id: string;
  answer: TimelineAnswer;
  job_type: string;
  message_id: string | null;
  delivery_attempt: number | null;
  effect_attempt: number;
  claim_ms: number;
  effect_created_at: string | null;
}

// Why batched, as the duplicate bookkeeping (duplicates.ts): a row per delivery written by the
// claim would add a write (and a WAL flush) to every duplicate's read-only claim. One INSERT takes
// every delivery seen since the last flush. delivery_id names each row, so a flush retried after a
// lost reply writes it once (ON CONFLICT on the unique index, which holds delivered_at).
export const INSERT_DELIVERIES: Statement = {
  name: "onceboard_insert_deliveries_v1",
  returns: "count",
  text: `INSERT INTO onceboard.delivery_timeline
       (tenant_id, key, delivered_at, delivery_id, answer, job_type, message_id, delivery_attempt, effect_attempt,
        worker_id, claim_ms, effect_created_at, demo)
SELECT d.tenant_id, d.key, d.delivered_at, d.delivery_id, d.answer, d.job_type, d.message_id, d.delivery_attempt,
       d.effect_attempt, $2::text, d.claim_ms, d.effect_created_at, $3::boolean
  FROM jsonb_to_recordset($1::jsonb)
       AS d(tenant_id text, key text, delivered_at timestamptz, delivery_id uuid, answer text, job_type text,
            message_id text, delivery_attempt integer, effect_attempt integer, claim_ms double precision,
            effect_created_at timestamptz)
    ON CONFLICT DO NOTHING`,
};

/** Rows per INSERT. */
const BATCH = 500;
/** A flush starts as soon as this many rows wait, without waiting for the interval. */
export const TIMELINE_FLUSH_AT = 1000;
/**
 * The most rows a worker holds while its flushes fail (the database unreachable): beyond it the
 * oldest are dropped and counted (idem_timeline_dropped_total), so an outage cannot grow the
 * worker's memory without bound. Also the most a SIGKILLed worker can lose (docs/worker-library.md).
 */
export const TIMELINE_MAX_PENDING = 10_000;

/** no partition of relation … found for row: the rows' range has no partition (dropped, or never made). */
const NO_PARTITION = "23514";

export class DeliveryTimeline extends PeriodicFlush {
  private pending: Pending[] = [];

  constructor(
    private readonly db: EffectsDb,
    private readonly options: {
      schema?: string;
      workerId: string;
      demo: boolean;
      logger: Logger;
      onDropped?: (reason: "buffer_full" | "no_partition", rows: number) => void;
    },
  ) {
    super();
  }

  record(d: DeliveryRecord): void {
    this.pending.push({
      tenant_id: d.tenant,
      key: d.key,
      // The database's clock when it answered (as effects.created_at), so a claimed row's
      // delivery and its effect carry the same instant.
      delivered_at: d.row.dbNow.toISOString(),
      delivery_id: randomUUID(),
      answer: d.answer,
      job_type: d.jobType,
      message_id: d.messageId,
      delivery_attempt: d.deliveryAttempt,
      effect_attempt: d.row.attempt,
      claim_ms: Math.round(d.claimSeconds * 1e6) / 1e3,
      effect_created_at: d.row.createdAt ? d.row.createdAt.toISOString() : null,
    });
    this.trim();
    if (this.pending.length >= TIMELINE_FLUSH_AT) void this.flush();
  }

  get size(): number {
    return this.pending.length;
  }

  private trim(): void {
    const over = this.pending.length - TIMELINE_MAX_PENDING;
    if (over <= 0) return;
    this.pending.splice(0, over);
    this.options.onDropped?.("buffer_full", over);
  }

  protected async flushOnce(): Promise<boolean> {
    if (this.pending.length === 0) return true;
    const rows = this.pending;
    this.pending = [];
    const sql = sqlFor(this.db, false, this.options.schema);
    const failed: Pending[] = [];
    for (let i = 0; i < rows.length; i += BATCH) {
      const batch = rows.slice(i, i + BATCH);
      try {
        await sql.run(INSERT_DELIVERIES, [JSON.stringify(batch), this.options.workerId, this.options.demo]);
      } catch (error) {
        if (sqlStateOf(error) === NO_PARTITION) {
          // Retrying cannot help (a partition is never made for the past): give these rows up.
          this.options.onDropped?.("no_partition", batch.length);
          this.options.logger.warn({ err: error, rows: batch.length }, "delivery timeline rows have no partition; dropped");
          continue;
        }
        failed.push(...batch);
        this.options.logger.warn({ err: error }, "delivery timeline flush failed; kept for the next flush");
      }
    }
    if (failed.length === 0) return true;
    // Older rows first, then what was recorded during the flush.
    this.pending = [...failed, ...this.pending];
    this.trim();
    return false;
  }
}
