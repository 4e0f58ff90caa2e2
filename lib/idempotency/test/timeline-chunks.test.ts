import { describe, expect, it } from "vitest";
import { LATER_KEY_SEPARATOR, type PendingDelivery, TIMELINE_CHUNK, toChunks } from "../timeline";

/** How a flush lays deliveries out in delivery_timeline's chunks (timeline.ts), without a database. */
type Pending = PendingDelivery;
const HOUR = 3_600_000;
const base = Date.UTC(2026, 11, 2, 0, 59, 58, 7);
const delivery = (at: number, key: string, answer: Pending["answer"] = "claimed"): Pending => ({
  tenant: "t1",
  key,
  jobType: "j",
  at,
  answer,
  messageId: null,
  deliveryAttempt: null,
  effectAttempt: 1,
  claimMs: 1,
  effectCreatedAt: answer === "claimed" ? at : base,
});

describe("toChunks", () => {
  it("keeps first deliveries in time order within one UTC minute, with no later_keys", () => {
    const chunks = toChunks([delivery(base + 1500, "b"), delivery(base, "a"), delivery(base + 2500, "c")]);
    expect(chunks.map((c) => [c.later_keys, c.keys, c.first_at, c.last_at])).toEqual([
      [null, ["a", "b"], "2026-12-02T00:59:58.007Z", "2026-12-02T00:59:59.507Z"],
      [null, ["c"], "2026-12-02T01:00:00.507Z", "2026-12-02T01:00:00.507Z"],
    ]);
    // Every instant written exactly as Date#toISOString writes it.
    for (const c of chunks) for (const at of c.delivered_at) expect(new Date(at).toISOString()).toBe(at);
  });

  it("groups later deliveries by key within one UTC hour, each key named once per chunk", () => {
    const chunks = toChunks([
      delivery(base + 1000, "x", "duplicate"),
      delivery(base + 1100, "y", "takeover"),
      delivery(base + 1200, "x", "duplicate"),
      delivery(base + HOUR, "x", "duplicate"),
    ]);
    expect(chunks.map((c) => [c.later_keys, c.keys, c.answers])).toEqual([
      [
        [`t1${LATER_KEY_SEPARATOR}x`, `t1${LATER_KEY_SEPARATOR}y`],
        ["x", "x", "y"],
        ["duplicate", "duplicate", "takeover"],
      ],
      [[`t1${LATER_KEY_SEPARATOR}x`], ["x"], ["duplicate"]],
    ]);
    for (const c of chunks) expect(Math.floor(Date.parse(c.first_at) / HOUR)).toBe(Math.floor(Date.parse(c.last_at) / HOUR));
  });

  it("cuts chunks at TIMELINE_CHUNK deliveries; a key split across two chunks is named in both", () => {
    const many = Array.from({ length: TIMELINE_CHUNK + 5 }, (_, i) => delivery(base + 2000 + i, "hot", "duplicate"));
    const chunks = toChunks(many);
    expect(chunks.map((c) => [c.keys.length, c.later_keys])).toEqual([
      [TIMELINE_CHUNK, [`t1${LATER_KEY_SEPARATOR}hot`]],
      [5, [`t1${LATER_KEY_SEPARATOR}hot`]],
    ]);
    expect(new Set(chunks.map((c) => c.chunk_id)).size).toBe(2);
  });
});
