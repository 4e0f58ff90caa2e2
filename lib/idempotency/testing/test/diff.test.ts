import { describe, expect, it } from "vitest";
import { diffSnapshots, normalizeSnapshot } from "../diff";

describe("diffSnapshots", () => {
  it("is empty for equal snapshots, key order aside", () => {
    expect(diffSnapshots({ a: 1, b: [{ x: 1, y: 2 }] }, { b: [{ y: 2, x: 1 }], a: 1 })).toEqual([]);
  });

  it("names each difference by path, reference first", () => {
    expect(
      diffSnapshots(
        { orders: [{ status: "paid" }], captures: [{ kind: "capture" }], "odd key": 1 },
        { orders: [{ status: "pending" }], captures: [{ kind: "capture" }, { kind: "capture" }], "odd key": 2 },
      ),
    ).toEqual([
      'orders[0].status: "paid" → "pending"',
      'captures: 1 item → 2 items; added {"kind":"capture"}',
      '"odd key": 1 → 2',
    ]);
  });

  it("compares as JSON: dates become strings, bigints decimal strings", () => {
    const at = new Date("2026-01-01T00:00:00Z");
    expect(normalizeSnapshot({ at, n: 3n, gone: undefined })).toEqual({ at: "2026-01-01T00:00:00.000Z", n: "3" });
    expect(diffSnapshots(normalizeSnapshot({ n: 1n }), normalizeSnapshot({ n: 2n }))).toEqual(['n: "1" → "2"']);
  });

  it("groups identical added or removed items", () => {
    expect(diffSnapshots({ c: [1] }, { c: [1, 2, 2, 3] })).toEqual(["c: 1 item → 4 items; added 2× 2, 3"]);
    expect(diffSnapshots({ c: [1, 2] }, { c: [] })).toEqual(["c: 2 items → 0 items; removed 1, 2"]);
  });

  it("stops after a limit", () => {
    const many = diffSnapshots(
      Array.from({ length: 30 }, (_, i) => i),
      Array.from({ length: 30 }, (_, i) => i + 1),
      5,
    );
    expect(many).toHaveLength(6);
    expect(many.at(-1)).toMatch(/more differences/);
  });
});
