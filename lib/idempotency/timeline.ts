import { randomUUID } from "node:crypto";
import type { ClaimResultKind, ClaimRow } from "./claim-sql";
import { type EffectsDb, sqlFor } from "./db";
import type { Logger } from "./logger";
import { PeriodicFlush } from "./periodic-flush";
import { isNoPartitionError } from "./pg-errors";
import type { TimelineAnswer } from "./states";
import type { Store, TimelineChunk } from "./store";

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
export interface PendingDelivery {
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

/** What recordBatch needs of each delivery of a batched claim: its spec's fields. */
export type BatchDelivery = Pick<DeliveryRecord, "tenant" | "key" | "jobType" | "messageId" | "deliveryAttempt">;

/**
 * The first deliveries of one batched claim statement (claimMany) held as one entry: the keys it
 * claimed set-wise share their instant (the statement's clock, which is also each effect's
 * created_at), their job type, attempt 1 and their claim time (the statement's, divided among them).
 * Only what can differ is held per delivery.
 */
export interface PendingBatch {
  jobType: string;
  at: number;
  effectAttempt: number;
  claimMs: number;
  tenants: string[];
  keys: string[];
  messageIds: (string | null)[];
  deliveryAttempts: (number | null)[];
}

/** The most deliveries in one chunk: bounds what the key page unnests to find one first delivery. */
export const TIMELINE_CHUNK = 1000;
/** Deliveries per INSERT (chunks are added whole up to it). */
const DELIVERIES_PER_INSERT = 20 * TIMELINE_CHUNK;
/**
 * A batched claim's first deliveries get a chunk of their own from this many on; fewer join the
 * minute's chunks one by one. Why (docs/benchmarks.md, "The timeline's chunks cut at batch
 * boundaries"): a chunk of one statement's deliveries stores delivered_at, claim_ms and every other
 * shared column once, so the server parses one key a delivery instead of a key, an instant and a
 * duration; below this the row a chunk costs outweighs what collapsing saves.
 */
export const TIMELINE_BATCH_CHUNK_MIN = 32;
/**
 * A flush starts as soon as this many deliveries wait, without waiting for the interval. Why 1,000
 * and not more (docs/benchmarks.md, "The timeline's chunks cut at batch boundaries"): what waits is
 * written by whoever flushes next, and a flush() or close() waits for it. At 5,000, the flush that
 * bench:timeline's batched path awaited after each quarter-second round was a large part of what it
 * still charged the timeline (0.929 of off; 0.922–0.972 in three runs at 1,000). A chunk of 1,000
 * is one INSERT either way.
 */
const TIMELINE_FLUSH_AT = 1000;
/**
 * The most deliveries a worker holds while its flushes fail (the database unreachable): beyond it
 * the oldest are dropped and counted (idem_timeline_dropped_total), so an outage cannot grow the
 * worker's memory without bound (docs/worker-library.md).
 */
const TIMELINE_MAX_PENDING = 50_000;

/** The separator in later_keys between tenant and key (neither is expected to hold it; the read compares both exactly). */
export const LATER_KEY_SEPARATOR = "\u001f";

const MINUTE = 60_000;
const HOUR = 3_600_000;

/**
 * Groups deliveries into chunks: first deliveries (claimed) by UTC minute in time order, the rest
 * by UTC hour with each key's deliveries together, TIMELINE_CHUNK at most each. Neither kind spans a
 * UTC hour, so a chunk lies inside one partition whatever the interval. Linear in the deliveries:
 * it runs on the worker's event loop beside its claims.
 */
export function toChunks(deliveries: readonly PendingDelivery[]): TimelineChunk[] {
  const firsts = new Map<number, PendingDelivery[]>();
  const laters = new Map<number, Map<string, PendingDelivery[]>>();
  for (const d of deliveries) {
    if (d.answer === "claimed") {
      const minute = Math.floor(d.at / MINUTE);
      const group = firsts.get(minute);
      if (group) group.push(d);
      else firsts.set(minute, [d]);
    } else {
      const hour = Math.floor(d.at / HOUR);
      let byKey = laters.get(hour);
      if (!byKey) {
        byKey = new Map();
        laters.set(hour, byKey);
      }
      const tenantKey = `${d.tenant}${LATER_KEY_SEPARATOR}${d.key}`;
      const group = byKey.get(tenantKey);
      if (group) group.push(d);
      else byKey.set(tenantKey, [d]);
    }
  }
  const format = isoFormatter();
  const chunks: TimelineChunk[] = [];
  for (const group of firsts.values()) {
    // Recorded in the order the claims were answered, nearly always in time order already.
    if (group.some((d, i) => i > 0 && d.at < (group[i - 1] as PendingDelivery).at)) group.sort((x, y) => x.at - y.at);
    for (let i = 0; i < group.length; i += TIMELINE_CHUNK) chunks.push(chunkOf(group.slice(i, i + TIMELINE_CHUNK), null, format));
  }
  for (const byKey of laters.values()) {
    let part: PendingDelivery[] = [];
    let keys: string[] = [];
    for (const [tenantKey, group] of byKey) {
      for (let i = 0; i < group.length; ) {
        const room = TIMELINE_CHUNK - part.length;
        const taken = group.slice(i, i + room);
        part.push(...taken);
        keys.push(tenantKey);
        i += taken.length;
        if (part.length === TIMELINE_CHUNK) {
          chunks.push(chunkOf(part, keys, format));
          part = [];
          keys = [];
        }
      }
    }
    if (part.length > 0) chunks.push(chunkOf(part, keys, format));
  }
  return chunks;
}

/**
 * Date#toISOString, about ten times faster for instants that share their minute (a flush's
 * deliveries do): Date#toISOString cost more than a microsecond a delivery on the loaded machine.
 * The last instant's text is kept: a batch's deliveries share one (its statement's clock).
 */
function isoFormatter(): (ms: number) => string {
  let minute = Number.NaN;
  let prefix = "";
  let lastMs = Number.NaN;
  let last = "";
  return (ms) => {
    if (ms === lastMs) return last;
    const m = Math.floor(ms / MINUTE);
    if (m !== minute) {
      minute = m;
      prefix = new Date(m * MINUTE).toISOString().slice(0, -7); // "2026-12-02T01:19:"
    }
    const rest = ms - m * MINUTE;
    const seconds = Math.floor(rest / 1000);
    const millis = rest - seconds * 1000;
    lastMs = ms;
    last = `${prefix}${seconds < 10 ? "0" : ""}${seconds}.${millis < 10 ? "00" : millis < 100 ? "0" : ""}${millis}Z`;
    return last;
  };
}

/** The column of a chunk: its one shared value when `shared`, else every delivery's. */
function column<T>(part: readonly PendingDelivery[], shared: boolean, value: (d: PendingDelivery) => T): T[] {
  return shared ? [value(part[0] as PendingDelivery)] : part.map(value);
}

// Why columns collapse (migration 0015 has the figures): a batch's deliveries share their tenant,
// job type, answer, attempts, and often their instant and claim time, and a first delivery met the
// effect it created. Writing each value once per chunk, not once per delivery, halves what the flush
// stringifies in the worker and what the server parses into arrays. One pass finds the shared
// columns; only the others are built per delivery.
function chunkOf(part: PendingDelivery[], laterKeys: string[] | null, iso: (ms: number) => string): TimelineChunk {
  const first = part[0] as PendingDelivery;
  let lo = first.at;
  let hi = first.at;
  let tenant = true;
  let jobType = true;
  let at = true;
  let answer = true;
  let messageId = true;
  let deliveryAttempt = true;
  let effectAttempt = true;
  let claimMs = true;
  let effectCreatedAt = true;
  let createdOwnEffect = true;
  for (const d of part) {
    if (d.at < lo) lo = d.at;
    if (d.at > hi) hi = d.at;
    tenant &&= d.tenant === first.tenant;
    jobType &&= d.jobType === first.jobType;
    at &&= d.at === first.at;
    answer &&= d.answer === first.answer;
    messageId &&= d.messageId === first.messageId;
    deliveryAttempt &&= d.deliveryAttempt === first.deliveryAttempt;
    effectAttempt &&= d.effectAttempt === first.effectAttempt;
    claimMs &&= d.claimMs === first.claimMs;
    effectCreatedAt &&= d.effectCreatedAt === first.effectCreatedAt;
    createdOwnEffect &&= d.effectCreatedAt === d.at;
  }
  return {
    chunk_id: randomUUID(),
    first_at: iso(lo),
    last_at: iso(hi),
    later_keys: laterKeys,
    tenants: column(part, tenant, (d) => d.tenant),
    keys: part.map((d) => d.key),
    job_types: column(part, jobType, (d) => d.jobType),
    delivered_at: column(part, at, (d) => iso(d.at)),
    answers: column(part, answer, (d) => d.answer),
    message_ids: column(part, messageId, (d) => d.messageId),
    delivery_attempts: column(part, deliveryAttempt, (d) => d.deliveryAttempt),
    effect_attempts: column(part, effectAttempt, (d) => d.effectAttempt),
    claim_ms: column(part, claimMs, (d) => d.claimMs),
    // None when every delivery met the effect it made (first deliveries): then it is delivered_at.
    effect_created_at: createdOwnEffect
      ? []
      : column(part, effectCreatedAt, (d) => (d.effectCreatedAt === null ? null : iso(d.effectCreatedAt))),
  };
}

/** [the one value] when every element is equal, else the elements: a chunk's column (migration 0015). */
function collapsed<T>(values: T[]): T[] {
  const first = values[0];
  for (const v of values) if (v !== first) return values;
  return [first as T];
}

/**
 * A chunk per batched claim statement, TIMELINE_CHUNK deliveries at most each: written as chunkOf
 * writes the same deliveries (so readers cannot tell), built from the batch's columns directly.
 * Every column but keys, message ids and delivery attempts holds the statement's one value; a
 * first delivery's effect_created_at is its delivered_at, so that column stays empty.
 */
export function batchChunks(batches: readonly PendingBatch[]): TimelineChunk[] {
  const format = isoFormatter();
  const chunks: TimelineChunk[] = [];
  for (const b of batches) {
    const at = format(b.at);
    for (let i = 0; i < b.keys.length; i += TIMELINE_CHUNK) {
      const end = i + TIMELINE_CHUNK;
      const whole = i === 0 && b.keys.length <= TIMELINE_CHUNK;
      chunks.push({
        chunk_id: randomUUID(),
        first_at: at,
        last_at: at,
        later_keys: null,
        tenants: collapsed(whole ? b.tenants : b.tenants.slice(i, end)),
        keys: whole ? b.keys : b.keys.slice(i, end),
        job_types: [b.jobType],
        delivered_at: [at],
        answers: ["claimed"],
        message_ids: collapsed(whole ? b.messageIds : b.messageIds.slice(i, end)),
        delivery_attempts: collapsed(whole ? b.deliveryAttempts : b.deliveryAttempts.slice(i, end)),
        effect_attempts: [b.effectAttempt],
        claim_ms: [b.claimMs],
        effect_created_at: [],
      });
    }
  }
  return chunks;
}

export class DeliveryTimeline extends PeriodicFlush {
  private pending: PendingDelivery[] = [];
  /** Batched claims' first deliveries, an entry per statement (recordBatch), and how many deliveries they hold. */
  private batches: PendingBatch[] = [];
  private batchDeliveries = 0;
  /** Chunks whose INSERT failed, retried as they are (same chunk_id: a lost reply's chunk is not written twice). */
  private unwritten: TimelineChunk[] = [];
  private unwrittenDeliveries = 0;

  constructor(
    private readonly db: EffectsDb,
    private readonly options: {
      schema?: string;
      /** Where the chunks go (PostgreSQL: a row of parallel arrays each; MySQL: a row per delivery). */
      store: Store;
      workerId: string;
      marked: boolean;
      logger: Logger;
      onDropped?: (reason: "buffer_full" | "no_partition", rows: number) => void;
    },
  ) {
    super();
  }

  /** Buffers one delivery; no I/O here (the claim path calls it). */
  record(d: DeliveryRecord): void {
    this.push(d);
    this.afterRecord();
  }

  /**
   * Buffers every delivery of one batched claim statement, `rows[k]` its answer to `deliveries[k]`,
   * each of them charged `claimSeconds`; no I/O here. The keys the statement claimed set-wise (one
   * instant, which is their effects' creation) are held as one entry when there are
   * TIMELINE_BATCH_CHUNK_MIN of them; every other answer is buffered as record() buffers it.
   */
  recordBatch(deliveries: readonly BatchDelivery[], rows: readonly ClaimRow[], claimSeconds: number): void {
    // The statement's set-wise claims: claimed, each meeting the effect it created, all at one instant.
    const shared = rows.find((row) => row.result === "claimed" && row.createdAt?.getTime() === row.dbNow.getTime());
    const jobType = deliveries[0]?.jobType;
    const inBatch = (k: number) => {
      const row = rows[k] as ClaimRow;
      return (
        row.result === "claimed" &&
        row.attempt === shared?.attempt &&
        row.dbNow.getTime() === shared.dbNow.getTime() &&
        row.createdAt?.getTime() === shared.dbNow.getTime() &&
        deliveries[k]?.jobType === jobType
      );
    };
    let together = 0;
    if (shared) for (let k = 0; k < deliveries.length; k++) if (inBatch(k)) together++;
    const batch: PendingBatch | null =
      shared && together >= TIMELINE_BATCH_CHUNK_MIN
        ? {
            jobType: jobType as string,
            at: shared.dbNow.getTime(),
            effectAttempt: shared.attempt,
            claimMs: Math.round(claimSeconds * 1e6) / 1e3,
            tenants: [],
            keys: [],
            messageIds: [],
            deliveryAttempts: [],
          }
        : null;
    for (let k = 0; k < deliveries.length; k++) {
      const d = deliveries[k] as BatchDelivery;
      const row = rows[k] as ClaimRow;
      if (batch && inBatch(k)) {
        batch.tenants.push(d.tenant);
        batch.keys.push(d.key);
        batch.messageIds.push(d.messageId);
        batch.deliveryAttempts.push(d.deliveryAttempt);
      } else {
        this.push({
          tenant: d.tenant,
          key: d.key,
          jobType: d.jobType,
          messageId: d.messageId,
          deliveryAttempt: d.deliveryAttempt,
          answer: timelineAnswerOf(row.result, false),
          row,
          claimSeconds,
        });
      }
    }
    if (batch) {
      this.batches.push(batch);
      this.batchDeliveries += batch.keys.length;
    }
    this.afterRecord();
  }

  private push(d: DeliveryRecord): void {
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
  }

  private afterRecord(): void {
    if (this.size > TIMELINE_MAX_PENDING) this.trim();
    if (this.pending.length + this.batchDeliveries >= TIMELINE_FLUSH_AT) void this.flush();
  }

  /** Deliveries held: recorded and not yet written. */
  get size(): number {
    return this.pending.length + this.batchDeliveries + this.unwrittenDeliveries;
  }

  /**
   * Drops the oldest deliveries beyond TIMELINE_MAX_PENDING: unwritten chunks first, then batches
   * (whole: a batch is one statement's), then recorded ones.
   */
  private trim(): void {
    let over = this.size - TIMELINE_MAX_PENDING;
    let dropped = 0;
    while (over > 0 && this.unwritten.length > 0) {
      const n = (this.unwritten.shift() as TimelineChunk).keys.length;
      this.unwrittenDeliveries -= n;
      over -= n;
      dropped += n;
    }
    while (over > 0 && this.batches.length > 0) {
      const n = (this.batches.shift() as PendingBatch).keys.length;
      this.batchDeliveries -= n;
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
    if (this.pending.length === 0 && this.batches.length === 0 && this.unwritten.length === 0) return true;
    const chunks = [...this.unwritten, ...toChunks(this.pending), ...batchChunks(this.batches)];
    this.pending = [];
    this.batches = [];
    this.batchDeliveries = 0;
    this.unwritten = [];
    this.unwrittenDeliveries = 0;
    const sql = sqlFor(this.db, false, this.options.schema);
    const failed: TimelineChunk[] = [];
    for (let i = 0; i < chunks.length; ) {
      let held = (chunks[i] as TimelineChunk).keys.length;
      let end = i + 1;
      while (end < chunks.length && held + (chunks[end] as TimelineChunk).keys.length <= DELIVERIES_PER_INSERT) {
        held += (chunks[end] as TimelineChunk).keys.length;
        end++;
      }
      const batch = chunks.slice(i, end);
      i = end;
      try {
        await this.options.store.insertTimeline(sql, batch, this.options.workerId, this.options.marked);
      } catch (error) {
        if (isNoPartitionError(error)) {
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
