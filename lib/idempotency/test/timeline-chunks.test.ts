import { describe, expect, it } from "vitest";
import { LATER_KEY_SEPARATOR, type PendingDelivery, TIMELINE_CHUNK, toChunks } from "../timeline";
import { readBack } from "./timeline-read-back";

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

describe("columns a chunk's deliveries share", () => {
  it("are written once: a batch's first deliveries keep only their keys and message ids per delivery", () => {
    const batch = ["a", "b", "c"].map((key) => ({ ...delivery(base, key), messageId: `m-${key}` }));
    const [chunk, ...rest] = toChunks(batch);
    expect(rest).toEqual([]);
    expect(chunk).toMatchObject({
      tenants: ["t1"],
      keys: ["a", "b", "c"],
      job_types: ["j"],
      delivered_at: ["2026-12-02T00:59:58.007Z"],
      answers: ["claimed"],
      message_ids: ["m-a", "m-b", "m-c"],
      delivery_attempts: [null],
      effect_attempts: [1],
      claim_ms: [1],
      // Each met the effect it created: its effect_created_at is its delivered_at.
      effect_created_at: [],
    });
    expect(readBack(toChunks(batch))).toEqual(batch);
  });

  it("first deliveries of several batches keep their instants per delivery, and still no effect_created_at", () => {
    const batches = [delivery(base, "a"), delivery(base, "b"), delivery(base + 3, "c")].map((d, i) => ({ ...d, claimMs: i }));
    const [chunk] = toChunks(batches);
    expect(chunk?.delivered_at).toEqual(["2026-12-02T00:59:58.007Z", "2026-12-02T00:59:58.007Z", "2026-12-02T00:59:58.010Z"]);
    expect(chunk?.claim_ms).toEqual([0, 1, 2]);
    expect(chunk?.effect_created_at).toEqual([]);
    expect(readBack(toChunks(batches))).toEqual(batches);
  });

  it("are not collapsed when they differ: mixed tenants, answers and attempts read back per delivery", () => {
    const mixed: Pending[] = [
      { ...delivery(base + 10, "x", "duplicate"), tenant: "t1", messageId: "m-1", deliveryAttempt: 2 },
      { ...delivery(base + 20, "x", "key_reuse"), tenant: "t1", messageId: "m-2" },
      { ...delivery(base + 30, "x", "waited"), tenant: "t2", effectAttempt: 2, claimMs: 7.5, effectCreatedAt: base + 5 },
      { ...delivery(base + 40, "y", "beyond_retention"), tenant: "t2", jobType: "k", effectCreatedAt: null },
    ];
    const chunks = toChunks(mixed);
    expect(chunks).toHaveLength(1);
    const columns = ["tenants", "job_types", "delivered_at", "answers", "message_ids", "delivery_attempts"] as const;
    for (const column of [...columns, "effect_attempts", "claim_ms", "effect_created_at"] as const) {
      expect(chunks[0]?.[column]).toHaveLength(4);
    }
    // Grouped by key (x's three, then y): the same deliveries, each with its own values.
    expect(readBack(chunks)).toEqual(mixed);
  });

  it("a later chunk whose deliveries all met one effect writes its effect_created_at once", () => {
    const replays = [delivery(base + 1, "x", "duplicate"), delivery(base + 2, "x", "duplicate")];
    const [chunk] = toChunks(replays);
    expect(chunk?.effect_created_at).toEqual(["2026-12-02T00:59:58.007Z"]);
    expect(chunk?.delivered_at).toHaveLength(2);
    expect(readBack(toChunks(replays))).toEqual(replays);
  });
});
