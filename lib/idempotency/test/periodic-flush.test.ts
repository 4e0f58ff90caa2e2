import { describe, expect, it } from "vitest";
import { PeriodicFlush } from "../periodic-flush";

/** Counts in memory; a flush writes them to `written` after `gate` opens (a slow or stalled database). */
class Counter extends PeriodicFlush {
  pending = 0;
  written = 0;
  flushes = 0;
  gate: Promise<void> = Promise.resolve();

  protected async flushOnce(): Promise<boolean> {
    const batch = this.pending; // taken when the flush begins, as Rollups and DuplicateLedger do
    this.pending = 0;
    this.flushes++;
    await this.gate;
    this.written += batch;
    return true;
  }
}

describe("PeriodicFlush", () => {
  it("a flush() called while one is in flight (close() during the timer's flush) also writes what was counted after that one began", async () => {
    // Found by the soak's fault proxy: a flush stalled in flight when the worker shut down, and
    // close() returned with the counts since then still in memory.
    const c = new Counter();
    let open!: () => void;
    c.gate = new Promise((resolve) => {
      open = resolve;
    });
    c.pending = 5;
    const timers = c.flush(); // the interval's flush, stalled
    c.pending += 3; // counted while it is in flight
    const closing = c.flush(); // close()
    const alsoClosing = c.flush(); // a concurrent caller shares the follow-up
    open();
    expect(await timers).toBe(true);
    expect(await closing).toBe(true);
    expect(await alsoClosing).toBe(true);
    expect(c.written).toBe(8);
    expect(c.flushes).toBe(2);
  });

  it("never writes one batch twice, and one flush() alone is one flush", async () => {
    const c = new Counter();
    c.pending = 4;
    expect(await c.flush()).toBe(true);
    expect(await c.flush()).toBe(true);
    expect(c.written).toBe(4);
    expect(c.flushes).toBe(2);
  });
});
