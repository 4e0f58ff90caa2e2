/**
 * Buffers writes in memory and flushes them on an interval and on demand. A flush takes its batch
 * (swaps the buffers) when it begins, so two flushes never write the same counts; a flush()
 * called while one is in flight waits for it and then flushes once more, for what was counted
 * after that one began. Concurrent callers share that follow-up.
 */
export abstract class PeriodicFlush {
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<boolean> | undefined;
  private followUp: Promise<boolean> | undefined;

  start(intervalMs: number): void {
    if (this.timer || intervalMs <= 0) return;
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Writes what is pending now (after any flush in flight); true when everything was written. */
  flush(): Promise<boolean> {
    if (!this.flushing) {
      this.flushing = this.flushOnce().finally(() => {
        this.flushing = undefined;
      });
      return this.flushing;
    }
    // Why not share the flush in flight: it took its batch when it began, so close() would return
    // with everything counted since still in memory, and lose it when the process exits.
    const again = () => {
      this.followUp = undefined;
      return this.flush();
    };
    this.followUp ??= this.flushing.then(again, again);
    return this.followUp;
  }

  protected abstract flushOnce(): Promise<boolean>;
}
