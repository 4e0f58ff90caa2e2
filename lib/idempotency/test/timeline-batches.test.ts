import { describe, expect, it } from "vitest";
import { batchChunks, type PendingBatch, type PendingDelivery, TIMELINE_CHUNK, toChunks } from "../timeline";
import { readBack } from "./timeline-read-back";

/**
 * A batched claim's deliveries held as one entry (DeliveryTimeline.recordBatch) and written as a
 * chunk of their own (batchChunks): read back as the key page reads chunks, they are the same
 * deliveries, with the same values, as toChunks writes from one record per delivery.
 */
const at = Date.UTC(2026, 11, 2, 5, 26, 1, 123);
const batchOf = (n: number, over: Partial<PendingBatch> = {}): PendingBatch => ({
  jobType: "j",
  at,
  effectAttempt: 1,
  claimMs: 0.042,
  tenants: Array.from({ length: n }, () => "t1"),
  keys: Array.from({ length: n }, (_, i) => `k-${i}`),
  messageIds: Array.from({ length: n }, () => null),
  deliveryAttempts: Array.from({ length: n }, () => null),
  ...over,
});

/** The batch's deliveries, one record each, as record() buffers them. */
const deliveriesOf = (b: PendingBatch): PendingDelivery[] =>
  b.keys.map((key, i) => ({
    tenant: b.tenants[i] as string,
    key,
    jobType: b.jobType,
    at: b.at,
    answer: "claimed",
    messageId: b.messageIds[i] ?? null,
    deliveryAttempt: b.deliveryAttempts[i] ?? null,
    effectAttempt: b.effectAttempt,
    claimMs: b.claimMs,
    effectCreatedAt: b.at,
  }));

describe("a batched claim's chunk", () => {
  it("holds every column but keys once: instant, claim time, answer, tenant, attempts", () => {
    const [chunk, ...rest] = batchChunks([batchOf(50)]);
    expect(rest).toEqual([]);
    expect(chunk).toMatchObject({
      first_at: "2026-12-02T05:26:01.123Z",
      last_at: "2026-12-02T05:26:01.123Z",
      later_keys: null,
      tenants: ["t1"],
      job_types: ["j"],
      delivered_at: ["2026-12-02T05:26:01.123Z"],
      answers: ["claimed"],
      message_ids: [null],
      delivery_attempts: [null],
      effect_attempts: [1],
      claim_ms: [0.042],
      effect_created_at: [],
    });
    expect(chunk?.keys).toHaveLength(50);
  });

  it("reads back as the same deliveries as one record each would: message ids, attempts and tenants per delivery", () => {
    const batch = batchOf(40, {
      tenants: Array.from({ length: 40 }, (_, i) => (i % 3 === 0 ? "t2" : "t1")),
      messageIds: Array.from({ length: 40 }, (_, i) => `m-${i}`),
      deliveryAttempts: Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? 1 : null)),
    });
    const chunks = batchChunks([batch]);
    expect(chunks[0]?.tenants).toHaveLength(40);
    expect(chunks[0]?.message_ids).toHaveLength(40);
    expect(readBack(chunks)).toEqual(deliveriesOf(batch));
    expect(readBack(chunks)).toEqual(readBack(toChunks(deliveriesOf(batch))));
  });

  it("cuts a batch of more than TIMELINE_CHUNK keys into chunks of TIMELINE_CHUNK, each named once", () => {
    const batch = batchOf(TIMELINE_CHUNK + 7, { messageIds: Array.from({ length: TIMELINE_CHUNK + 7 }, (_, i) => `m-${i}`) });
    const chunks = batchChunks([batch, batchOf(30, { at: at + 5, claimMs: 1.5 })]);
    expect(chunks.map((c) => [c.keys.length, c.message_ids.length, c.delivered_at.length])).toEqual([
      [TIMELINE_CHUNK, TIMELINE_CHUNK, 1],
      [7, 7, 1],
      [30, 1, 1],
    ]);
    expect(new Set(chunks.map((c) => c.chunk_id)).size).toBe(3);
    expect(readBack(chunks)).toEqual([...deliveriesOf(batch), ...deliveriesOf(batchOf(30, { at: at + 5, claimMs: 1.5 }))]);
  });
});
