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

/** A delivery waiting for the next flush: what DeliveryRecord says, with the instants as epoch ms. */
interface Pending {
  tenant: string;
  key: string;
  jobType: string;
  at: number;
  answer: TimelineAnswer;
  messageId: string | null;
  deliveryAttempt: number | null;
  effectAttempt: number;
  claimMs: number;
  effectCreatedAt: number | null;
}

/** One row of delivery_timeline as INSERT_CHUNKS reads it from JSON: parallel arrays, element i one delivery. */
interface Chunk {
  chunk_id: string;
  first_at: string;
  last_at: string;
  later_keys: string[] | null;
  tenants: string[];
  keys: string[];
  job_types: string[];
  delivered_at: string[];
  answers: TimelineAnswer[];
  message_ids: (string | null)[];
  delivery_attempts: (number | null)[];
  effect_attempts: number[];
  claim_ms: number[];
  effect_created_at: (string | null)[];
}

// Why chunks and not a row per delivery (migration 0010 says more): one heap row and one index
// entry per delivery cost the cheap claim paths (batched claims, duplicates) a fifth to a third of
// their rate. A chunk is one row of parallel arrays; chunk_id names it, so a flush retried after a
// lost reply writes it once. JSON rather than array parameters: every driver passes one text.
export const INSERT_CHUNKS: Statement = {
  name: "onceboard_insert_delivery_chunks_v1",
  returns: "count",
  text: `INSERT INTO onceboard.delivery_timeline
       (first_at, last_at, chunk_id, worker_id, demo, later_keys, tenants, keys, job_types, delivered_at, answers,
        message_ids, delivery_attempts, effect_attempts, claim_ms, effect_created_at)
SELECT d.first_at, d.last_at, d.chunk_id, $2::text, $3::boolean, d.later_keys, d.tenants, d.keys, d.job_types,
       d.delivered_at, d.answers, d.message_ids, d.delivery_attempts, d.effect_attempts, d.claim_ms, d.effect_created_at
  FROM jsonb_to_recordset($1::jsonb)
       AS d(first_at timestamptz, last_at timestamptz, chunk_id uuid, later_keys text[], tenants text[], keys text[],
            job_types text[], delivered_at timestamptz[], answers text[], message_ids text[], delivery_attempts integer[],
            effect_attempts integer[], claim_ms real[], effect_created_at timestamptz[])
    ON CONFLICT DO NOTHING`,
};

/** The most deliveries in one chunk: bounds what the key page unnests to find one first delivery. */
export const TIMELINE_CHUNK = 1000;
/** Chunks per INSERT. */
const CHUNKS_PER_INSERT = 20;
/** A flush starts as soon as this many deliveries wait, without waiting for the interval. */
export const TIMELINE_FLUSH_AT = 5000;
/**
 * The most deliveries a worker holds while its flushes fail (the database unreachable): beyond it
 * the oldest are dropped and counted (idem_timeline_dropped_total), so an outage cannot grow the
 * worker's memory without bound (docs/worker-library.md).
 */
export const TIMELINE_MAX_PENDING = 50_000;

/** The separator in later_keys between tenant and key (neither is expected to hold it; the read compares both exactly). */
export const LATER_KEY_SEPARATOR = "\u001f";

const MINUTE = 60_000;
const HOUR = 3_600_000;

/** no partition of relation … found for row: the rows' range has no partition (dropped, or never made). */
const NO_PARTITION = "23514";

/**
 * Groups deliveries into chunks: first deliveries (claimed) by UTC minute in time order, the rest
 * by UTC hour in key order, TIMELINE_CHUNK at most each. Neither kind spans a UTC hour, so a chunk
 * lies inside one partition whatever the interval.
 */
export function toChunks(deliveries: readonly Pending[]): Chunk[] {
  const groups = new Map<string, Pending[]>();
  for (const d of deliveries) {
    const first = d.answer === "claimed";
    const id = first ? `f${Math.floor(d.at / MINUTE)}` : `l${Math.floor(d.at / HOUR)}`;
    const group = groups.get(id);
    if (group) group.push(d);
    else groups.set(id, [d]);
  }
  const chunks: Chunk[] = [];
  for (const [id, group] of groups) {
    const first = id.startsWith("f");
    if (first) group.sort((a, b) => a.at - b.at);
    else
      group.sort((a, b) =>
        a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : a.at - b.at,
      );
    for (let i = 0; i < group.length; i += TIMELINE_CHUNK) chunks.push(chunkOf(group.slice(i, i + TIMELINE_CHUNK), first));
  }
  return chunks;
}

function chunkOf(part: Pending[], first: boolean): Chunk {
  let lo = Infinity;
  let hi = -Infinity;
  for (const d of part) {
    if (d.at < lo) lo = d.at;
    if (d.at > hi) hi = d.at;
  }
  return {
    chunk_id: randomUUID(),
    first_at: new Date(lo).toISOString(),
    last_at: new Date(hi).toISOString(),
    later_keys: first ? null : [...new Set(part.map((d) => `${d.tenant}${LATER_KEY_SEPARATOR}${d.key}`))],
    tenants: part.map((d) => d.tenant),
    keys: part.map((d) => d.key),
    job_types: part.map((d) => d.jobType),
    delivered_at: part.map((d) => new Date(d.at).toISOString()),
    answers: part.map((d) => d.answer),
    message_ids: part.map((d) => d.messageId),
    delivery_attempts: part.map((d) => d.deliveryAttempt),
    effect_attempts: part.map((d) => d.effectAttempt),
    claim_ms: part.map((d) => d.claimMs),
    effect_created_at: part.map((d) => (d.effectCreatedAt === null ? null : new Date(d.effectCreatedAt).toISOString())),
  };
}

export class DeliveryTimeline extends PeriodicFlush {
  private pending: Pending[] = [];
  /** Chunks whose INSERT failed, retried as they are (same chunk_id: a lost reply's chunk is not written twice). */
  private unwritten: Chunk[] = [];
  private unwrittenDeliveries = 0;

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

  /** Buffers one delivery; no I/O here (the claim path calls it). */
  record(d: DeliveryRecord): void {
    this.pending.push({
      tenant: d.tenant,
      key: d.key,
      jobType: d.jobType,
      // The database's clock when it answered (as effects.created_at): a claimed delivery is the
      // instant of its effect's creation, which is how the key page finds it.
      at: d.row.dbNow.getTime(),
      answer: d.answer,
      messageId: d.messageId,
      deliveryAttempt: d.deliveryAttempt,
      effectAttempt: d.row.attempt,
      claimMs: Math.round(d.claimSeconds * 1e6) / 1e3,
      effectCreatedAt: d.row.createdAt ? d.row.createdAt.getTime() : null,
    });
    if (this.pending.length + this.unwrittenDeliveries > TIMELINE_MAX_PENDING) this.trim();
    if (this.pending.length >= TIMELINE_FLUSH_AT) void this.flush();
  }

  /** Deliveries held: recorded and not yet written. */
  get size(): number {
    return this.pending.length + this.unwrittenDeliveries;
  }

  /** Drops the oldest deliveries beyond TIMELINE_MAX_PENDING: unwritten chunks first, then recorded ones. */
  private trim(): void {
    let over = this.size - TIMELINE_MAX_PENDING;
    let dropped = 0;
    while (over > 0 && this.unwritten.length > 0) {
      const n = (this.unwritten.shift() as Chunk).keys.length;
      this.unwrittenDeliveries -= n;
      over -= n;
      dropped += n;
    }
    if (over > 0) {
      this.pending.splice(0, over);
      dropped += over;
    }
    if (dropped > 0) this.options.onDropped?.("buffer_full", dropped);
  }

  protected async flushOnce(): Promise<boolean> {
    if (this.pending.length === 0 && this.unwritten.length === 0) return true;
    const chunks = [...this.unwritten, ...toChunks(this.pending)];
    this.pending = [];
    this.unwritten = [];
    this.unwrittenDeliveries = 0;
    const sql = sqlFor(this.db, false, this.options.schema);
    const failed: Chunk[] = [];
    for (let i = 0; i < chunks.length; i += CHUNKS_PER_INSERT) {
      const batch = chunks.slice(i, i + CHUNKS_PER_INSERT);
      try {
        await sql.run(INSERT_CHUNKS, [JSON.stringify(batch), this.options.workerId, this.options.demo]);
      } catch (error) {
        if (sqlStateOf(error) === NO_PARTITION) {
          // Retrying cannot help (a partition is never made for the past): give these up.
          const deliveries = batch.reduce((n, c) => n + c.keys.length, 0);
          this.options.onDropped?.("no_partition", deliveries);
          this.options.logger.warn({ err: error, rows: deliveries }, "delivery timeline rows have no partition; dropped");
          continue;
        }
        failed.push(...batch);
        this.options.logger.warn({ err: error }, "delivery timeline flush failed; kept for the next flush");
      }
    }
    if (failed.length === 0) return true;
    this.unwritten = failed;
    this.unwrittenDeliveries = failed.reduce((n, c) => n + c.keys.length, 0);
    if (this.size > TIMELINE_MAX_PENDING) this.trim();
    return false;
  }
}
