import { describe, expect, it } from "vitest";
import { recordStart } from "./get-workers";

describe("worker restarts from process_start_time_seconds", () => {
  it("counts a worker killed six times in eight minutes, and forgets restarts older than an hour", () => {
    const history = new Map<string, number[]>();
    const t0 = Date.parse("2026-11-30T12:00:00Z");
    const url = "http://127.0.0.1:9464/metrics";
    expect(recordStart(history, url, t0, t0 + 5_000)).toBe(0); // first seen: the baseline
    expect(recordStart(history, url, t0, t0 + 20_000)).toBe(0); // same process, scraped again
    let restarts = 0;
    for (let k = 1; k <= 6; k++) {
      const start = t0 + k * 80_000; // a new process every 80 s: six in eight minutes
      restarts = recordStart(history, url, start, start + 10_000);
    }
    expect(restarts).toBe(6);
    expect(recordStart(history, url, null, t0 + 9 * 60_000)).toBe(6); // down: nothing new
    // 70 minutes later, same process: every restart is outside the window.
    expect(recordStart(history, url, t0 + 6 * 80_000, t0 + 70 * 60_000 + 6 * 80_000)).toBe(0);
    expect(recordStart(history, "http://other/metrics", t0, t0)).toBe(0);
  });
});
